"""A failed answering or judging call is degradation: counted in the rows, never a silent 0.

The answerer fails for good on one probe's question, a judge on another's answer (a fake backend
raising ``BackendError``, its retries spent): the cell is not lost, the failed answer leaves its
probe without QA scores or verdicts, the failed verdict leaves no ``judge`` row, and both are counted
(``degraded.answer.failed``, ``degraded.judge.failed``, the ``degraded`` column).
"""

from __future__ import annotations

from lyra_lab.backends import FakeLLM
from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment
from lyra_lab.runs import read_log

RUN = """
name = "failed-answers"
[corpus]
path = "tiny.jsonl"
conversations = 1
[grid]
chunkers = [{ name = "turn_window", max_turns = 2 }]
summarizers = ["none"]
recallers = ["bm25"]
[run]
backends = ["fake"]
embedders = ["none"]
ks = [1]
cache = "off"
[qa]
enabled = true
judges = [{ prompt = "correct_wrong_v1", backend = "judge", controls = false }]
"""


def asks(word: str):
    """A fake's ``fail``: true for a call whose prompt holds the question ending in ``word``."""
    return lambda messages: f"what did I say: {word}?" in messages[-1]["content"]


def test_failed_answer_and_judge_calls_are_counted_and_leave_no_score(write_toml, corpus_path, tmp_path):
    spec = ExperimentSpec.from_toml(write_toml(RUN))
    answerer = FakeLLM(respond=lambda msgs: "Biscuit", fail=asks("nurse"))  # u0:q1's answer fails
    judge = FakeLLM(respond=lambda msgs: "CORRECT", fail=asks("peanuts"))  # the verdict on u0:q2's answer fails
    df = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": answerer, "judge": judge}))
    assert df.attrs["failed_cells"] == []
    probes = set(df.loc[df["probe_id"] != "", "probe_id"])
    assert probes == {"u0:q0", "u0:q1", "u0:q2", "u0:qa"}
    qa = set(df.loc[df["metric"] == "qa_f1", "probe_id"])
    assert qa == probes - {"u0:q1"}  # the failed answer has no QA score (not a 0)
    assert set(df.loc[df["metric"] == "judge", "probe_id"]) == qa - {"u0:q2"}  # nor the failed verdict a row
    conversation = df[df["probe_id"] == ""].set_index("metric")["value"]
    assert conversation["degraded.answer.failed"] == 1 and conversation["degraded.judge.failed"] == 1
    assert (df["degraded"] == 2).all()
    events = list(read_log(tmp_path / "run" / "log.jsonl"))
    degraded = [e for e in events if e["event"] == "degraded"]
    assert sorted((e["metric"], e["probe_id"]) for e in degraded) == [
        ("degraded.answer.failed", "u0:q1"), ("degraded.judge.failed", "u0:q2")]
    (attempts,) = [e for e in events if e["event"] == "call_attempts"]
    assert attempts["phases"]["answer"]["calls.failed.attempts"] == 1
    assert attempts["phases"]["judge"]["calls.failed.attempts"] == 1
    detail = {e["probe_id"]: e for e in events if e["event"] == "probe_detail"}
    assert detail["u0:q1"]["answer"] is None and detail["u0:q2"]["judges"] == []
    (failed,) = [e for e in events if e["event"] == "answer" and e["text"] is None]
    assert failed["probe_id"] == "u0:q1" and failed["failed"] and "HTTP 500" in failed["error"]
    from lyra_lab.reports import write_report

    write_report(tmp_path / "run", n_resamples=20)
    page = (tmp_path / "run" / "report" / "report.html").read_text(encoding="utf-8")
    assert "⚠ no answer: the call failed (fake: HTTP 500" in page and "⚠ degraded (2)" in page


def test_a_failed_control_call_is_counted_apart_and_leaves_the_verdicts_alone(write_toml, corpus_path, tmp_path):
    spec = ExperimentSpec.from_toml(write_toml(RUN.replace(", controls = false", "")))
    negated = lambda messages: "Generated answer: It is not" in messages[-1]["content"]  # noqa: E731
    judge = FakeLLM(respond=lambda msgs: "CORRECT", fail=negated)  # every 'negated' control call fails
    df = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": FakeLLM(respond=lambda m: "x"),
                                                                         "judge": judge}))
    controls = df[df["metric"].isin(["judge_tpr", "judge_fpr"])]
    assert len(controls) > 0 and "negated" not in set(controls["judge_control"])  # no row for a failed call
    conversation = df[df["probe_id"] == ""].set_index("metric")["value"]
    failed = conversation["degraded.judge_control.failed"]
    assert failed == 3 and "degraded.judge.failed" not in conversation  # the 3 answerable probes' negations
    assert len(df[df["metric"] == "judge"]) == 4  # every real verdict is there
