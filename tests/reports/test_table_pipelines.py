"""``report --table`` rows are the report's pipelines: backends split, degraded pipelines marked with their counts.

The benchmark tables used to group by the raw ``pipeline`` column: two backends of one pipeline, one
judged right on every question and one wrong on every one, printed as one row at 0.500 over both
backends' questions, while summary.md split them; a pipeline that lost 4 of its 10 answers printed
1.000 (n=6) with no mark.  First on frames of rows as a run writes them, then a real run over LoCoMo
through the CLI (two in-process backends answering differently, one judge).
"""

from __future__ import annotations

import re

import pandas as pd

from lyra_lab.backends import FakeLLM
from lyra_lab.cli import main
from lyra_lab.reports import locomo_table, longmemeval_table, write_report
from tests.helpers.locomo import locomo_path, needs_locomo

TYPES = ["single-session-user", "multi-session"]


def _judged(backend: str, verdicts: list[float], cell: str, degraded: int = 0, lost: int = 0) -> list[dict]:
    """One cell's rows: a judge verdict per answered question, and the answers it lost counted."""
    base = {"pipeline": "turn_window|bm25", "backend": backend, "embedder": "none", "cell_id": cell,
            "conversation_id": "c1", "degraded": degraded}
    rows = [{**base, "probe_id": f"q{i}", "category": TYPES[i % 2], "metric": "judge", "judge": "j",
             "value": v} for i, v in enumerate(verdicts)]
    if lost:
        rows.append({**base, "probe_id": "", "category": None, "metric": "degraded.answer.failed", "judge": None,
                     "value": float(lost)})
    return rows


def test_longmemeval_table_splits_two_backends_as_the_report_does():
    df = pd.DataFrame(_judged("right", [1.0] * 10, "a") + _judged("wrong", [0.0] * 10, "b"))
    overall = longmemeval_table(df).cells.query("column == 'overall'").set_index("pipeline")
    assert sorted(overall.index) == ["turn_window|bm25|backend=right", "turn_window|bm25|backend=wrong"]
    assert overall.loc["turn_window|bm25|backend=right", ["value", "n"]].tolist() == [1.0, 10]
    assert overall.loc["turn_window|bm25|backend=wrong", ["value", "n"]].tolist() == [0.0, 10]


def test_a_table_marks_a_pipeline_that_lost_answers_with_their_count():
    df = pd.DataFrame(_judged("fake", [1.0] * 6, "a", degraded=4, lost=4))
    table = longmemeval_table(df)
    (pipeline,) = set(table.cells["pipeline"])
    assert pipeline == "turn_window ⚠ degraded (4)|bm25"
    assert "turn_window ⚠ degraded (4)\\|bm25 | judge accuracy (j) |" in table.markdown()
    assert any("4 degraded.answer.failed" in note for note in table.notes)


def test_locomo_table_splits_backends_and_marks_degradation_too():
    rows = _judged("right", [1.0] * 10, "a") + _judged("wrong", [0.0] * 6, "b", degraded=4, lost=4)
    df = pd.DataFrame(rows).assign(category=lambda d: d["category"].map({TYPES[0]: 1, TYPES[1]: 2, None: None}))
    overall = locomo_table(df).cells.query("column == 'overall'").set_index("pipeline")
    assert overall.loc["turn_window|bm25|backend=right", ["value", "n"]].tolist() == [1.0, 10]
    assert overall.loc["turn_window ⚠ degraded (4)|bm25|backend=wrong", ["value", "n"]].tolist() == [0.0, 6]


def _judge(messages) -> str:
    """CORRECT exactly when the generated answer is the word ``right``."""
    answer = re.search(r"Generated answer: (.*)\n", messages[-1]["content"]).group(1)
    return "CORRECT" if answer.strip() == "right" else "WRONG"


@needs_locomo
def test_report_table_of_a_two_backend_run_prints_each_backend_as_summary_md_does(tmp_path, capsys):
    from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment

    spec = ExperimentSpec.from_dict({
        "name": "two-backends", "corpus": {"path": str(locomo_path()), "conversations": 1},
        "grid": {"chunkers": [{"name": "turn_window", "max_turns": 1}], "recallers": ["bm25"]},
        "run": {"backends": ["right", "wrong"], "embedders": ["none"], "ks": [5], "score_at_tokens": [],
                "cache": "off"},
        "qa": {"enabled": True, "max_probes": 10,
               "judges": [{"prompt": "correct_wrong_v1", "backend": "judge", "controls": False}]}})
    injected = Injected(backends={"right": FakeLLM(respond=lambda m: "right", name="right"),
                                  "wrong": FakeLLM(respond=lambda m: "wrong", name="wrong"),
                                  "judge": FakeLLM(respond=_judge, name="judge")})
    run_dir = tmp_path / "run"
    run_experiment(spec, run_dir, None, injected)
    write_report(run_dir)
    assert main(["report", str(run_dir), "--table", "locomo"]) == 0
    out = capsys.readouterr().out  # a block per pipeline on the terminal, the markdown table in the file
    assert "\nturn_window+none+none|bm25|backend=right\n" in out and "|backend=wrong\n" in out and "0.500" not in out
    md = (run_dir / "report" / "table_locomo.md").read_text(encoding="utf-8")
    lines = [line for line in md.splitlines() if line.startswith("| turn_window") and "judge accuracy" in line]
    assert len(lines) == 2, md
    right = next(line for line in lines if "backend=right" in line)
    wrong = next(line for line in lines if "backend=wrong" in line)
    assert "1.000 (n=10)" in right and "0.000 (n=10)" in wrong and "0.500" not in out
    summary = (run_dir / "report" / "summary.md").read_text(encoding="utf-8")
    assert "backend=right" in summary and "backend=wrong" in summary  # the one label, in both
