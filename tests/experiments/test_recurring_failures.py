"""A call the provider refuses itself (HTTP 400 every time) is failed for good at every stage (issue 42, case 5).

The simulated server answers one call 400 on every attempt: a summarizer's call (single_pass, with
no fallback, and one chunk call of map_reduce, which falls back to an excerpt), an answer, a
judge's verdict.  Each becomes a ``failed.<stage>.<reason>`` count in the cell's rows; a plain
resume keeps the cell (0 requests: sent again, the call would fail the same way) and
``--retry-failed`` (``RunOptions(retry_failed=True)``) sends it again.  A 503 or a 429 on every
attempt stays what it was: degradation a resume heals, so a plain resume runs it again.
"""

from __future__ import annotations

import textwrap

import pytest

from lyra_lab.backends import SimulatedServer
from lyra_lab.experiments import ExperimentSpec, RunOptions, run_experiment
from lyra_lab.runs import RunFolder, read_log
from tests.experiments.test_resume_work import started

BACKEND = "max_attempts = 3, retry_base_s = 0.01, retry_max_s = 0.02, timeout_s = 5"
JUDGE = "Label a generated answer"  # in every judge prompt of correct_wrong_v1, in no answer prompt


def spec_of(tmp_path, corpus_path, url: str, summarizer: str, qa: bool) -> ExperimentSpec:
    backend = f'{{ preset = "simulated", base_url = "{url}", {BACKEND} }}'
    text = textwrap.dedent(f"""
        name = "recurring"
        [corpus]
        path = "{corpus_path}"
        conversations = 1
        [grid]
        chunkers = [{{ name = "turn_window", max_turns = 2 }}]
        summarizers = [{summarizer}]
        recallers = ["bm25"]
        [run]
        backends = [{backend}]
        embedders = ["none"]
        ks = [1]
        cache = "run"
        """)
    if qa:
        text += textwrap.dedent(f"""
            [qa]
            enabled = true
            judges = [{{ prompt = "correct_wrong_v1", backend = {backend}, controls = false }}]
            """)
    path = tmp_path / "exp.toml"
    path.write_text(text, encoding="utf-8")
    return ExperimentSpec.from_toml(path)


def struck(server: SimulatedServer, rule: int) -> int:
    """Requests the fault rule ``rule`` answered so far."""
    return sum(1 for r in server.chat_log() if r.rule == rule)


CASES = {
    # stage: (summarizer, qa, what the rule strikes, the metric it becomes)
    "single_pass": ('{ name = "single_pass", max_tokens = 16 }', False, {"contains": "works as a nurse"},
                    "failed.backend.bad_request"),
    "map_reduce chunk": ('{ name = "map_reduce", max_tokens = 16, merge_max_tokens = 16 }', False,
                         {"contains": "works as a nurse", "excludes": "Combine the summaries"},
                         "failed.summarize.bad_request"),
    "answer": ('"none"', True, {"contains": "what did I say: nurse?", "excludes": JUDGE},
               "failed.answer.bad_request"),
    "judge": ('"none"', True, {"contains": (JUDGE, "what did I say: peanuts?")}, "failed.judge.bad_request"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_call_answered_400_every_time_is_failed_for_good_and_not_sent_again(case, tmp_path, corpus_path):
    summarizer, qa, where, metric = CASES[case]
    with SimulatedServer(latency_s=0.001, default_max_tokens=8) as server:
        spec = spec_of(tmp_path, corpus_path, server.base_url, summarizer, qa)
        rule = server.fail_matching("400", **where)
        run_dir = tmp_path / "run"
        df = run_experiment(spec, run_dir, RunOptions(progress=False))
        assert struck(server, rule) == 1  # a 400 is not retried
        assert df.attrs["failed_cells"] == []  # not a cell_failed: the cell has rows saying why
        rows = df[df["metric"] == metric]
        assert len(rows) == 1 and rows["value"].iloc[0] == 1.0 and rows["probe_id"].iloc[0] == ""
        assert not df["metric"].str.startswith("degraded.").any() and (df["degraded"] == 1).all()
        assert set(RunFolder(run_dir).failed().values()) == {metric}

        requests = len(server.chat_log())
        run_experiment(spec, run_dir, RunOptions(progress=False))  # a plain resume
        assert len(server.chat_log()) == requests and started(run_dir, 2) == set()
        (kept,) = [e for e in read_log(run_dir / "log.jsonl") if e["event"] == "cell_resumed"][-1:]
        assert kept["rerun"] is None and kept["failed"] == metric

        run_experiment(spec, run_dir, RunOptions(progress=False, retry_failed=True))
        assert struck(server, rule) == 2 and started(run_dir, 3) == set(rows["cell_id"])


@pytest.mark.parametrize("outcome", ["503", "429"])
def test_a_transient_failure_every_time_stays_degraded_and_a_plain_resume_runs_it_again(outcome, tmp_path,
                                                                                        corpus_path):
    with SimulatedServer(latency_s=0.001, default_max_tokens=8) as server:
        spec = spec_of(tmp_path, corpus_path, server.base_url, '"none"', True)
        rule = server.fail_matching(outcome, contains="what did I say: nurse?", excludes=JUDGE)
        run_dir = tmp_path / "run"
        df = run_experiment(spec, run_dir, RunOptions(progress=False))
        assert struck(server, rule) == 3  # every attempt
        conversation = df[df["probe_id"] == ""].set_index("metric")["value"]
        assert conversation["degraded.answer.failed"] == 1
        assert not df["metric"].str.startswith("failed.").any() and RunFolder(run_dir).failed() == {}
        run_experiment(spec, run_dir, RunOptions(progress=False))  # heals: the call is sent again
        assert struck(server, rule) == 6 and started(run_dir, 2) == set(df["cell_id"])
