"""Retrieval and answering apart (``reports._split``) and the distance to the ceilings (``_ceiling_report``): the
figures equal a hand count on a small fixture, and a run with QA and the ceilings reports both sections."""

from __future__ import annotations

import pandas as pd
import pytest

from lyra_lab.experiments import ExperimentSpec, RunOptions, run_experiment
from lyra_lab.reports import write_report
from lyra_lab.reports._ceiling_report import ceiling_section
from lyra_lab.reports._split import gap_split, probe_table, split_by_pipeline, split_section
from lyra_lab.reports import _split_plot as split_plot
from lyra_lab.reports._split_plot import split_figure
from tests.systems.conftest import SYNTHETIC

# (pipeline, conversation, probe, evidence in context, judge verdicts): A has the evidence for 4 of 6
# probes, B for 2; B's extra verdicts come from a second judge (averaged per probe).
PROBES = {
    "A": [("c1", "p1", 1, [1]), ("c1", "p2", 1, [1]), ("c1", "p3", 0, [0]),
          ("c2", "p4", 1, [0]), ("c2", "p5", 1, [1]), ("c2", "p6", 0, [1])],
    "B": [("c1", "p1", 1, [1, 1]), ("c1", "p2", 0, [0, 0]), ("c1", "p3", 0, [0, 1]),
          ("c2", "p4", 1, [1, 1]), ("c2", "p5", 0, [0, 0]), ("c2", "p6", 0, [0, 0])],
}


def fixture_rows() -> pd.DataFrame:
    rows = []
    for pipeline, probes in PROBES.items():
        for conv, probe, held, verdicts in probes:
            base = {"pipeline": pipeline, "conversation_id": conv, "probe_id": probe, "seed": 0}
            rows.append({**base, "metric": "evidence_in_context", "value": float(held), "judge": None})
            rows += [{**base, "metric": "judge", "value": float(v), "judge": f"j{i}"} for i, v in enumerate(verdicts)]
            rows.append({**base, "metric": "qa_f1", "value": 0.5, "judge": None})
        rows.append({"pipeline": pipeline, "conversation_id": "c1", "probe_id": "", "seed": 0,
                     "metric": "memory_entries", "value": 10.0, "judge": None})
    return pd.DataFrame(rows)


def test_the_shares_and_conditional_accuracies_are_a_hand_count():
    table, metric = probe_table(fixture_rows())
    assert metric == "judge" and len(table) == 12
    a, b = split_by_pipeline(table, n_resamples=200)
    assert (a.pipeline, a.share.mean, a.share.n) == ("A", 4 / 6, 6)
    assert (a.accuracy_in.mean, a.accuracy_in.n) == (3 / 4, 4)  # p1, p2, p5 right; p4 wrong
    assert (a.accuracy_out.mean, a.accuracy_out.n) == (1 / 2, 2)  # p6 right, p3 wrong
    assert (b.share.mean, b.accuracy_in.mean, b.accuracy_in.n) == (2 / 6, 1.0, 2)
    assert b.accuracy_out.mean == pytest.approx(0.5 / 4) and b.accuracy_out.n == 4  # p3: one judge of two
    assert a.share.low <= a.share.mean <= a.share.high


def test_the_gap_splits_exactly_into_retrieval_and_answering():
    table, _ = probe_table(fixture_rows())
    gap = gap_split(table, "A", "B", n_resamples=200)
    acc_a, acc_b = 4 / 6, (2 + 0.5) / 6
    s_a, a_a, o_a, s_b, a_b, o_b = 4 / 6, 3 / 4, 1 / 2, 2 / 6, 1.0, 0.5 / 4
    retrieval = ((a_a - o_a) + (a_b - o_b)) / 2 * (s_b - s_a)
    answering = (s_a + s_b) / 2 * (a_b - a_a) + (1 - (s_a + s_b) / 2) * (o_b - o_a)
    assert gap.n == 6 and gap.gap.mean == pytest.approx(acc_b - acc_a)
    assert (gap.retrieval.mean, gap.answering.mean) == (pytest.approx(retrieval), pytest.approx(answering))
    assert gap.retrieval.mean + gap.answering.mean == pytest.approx(gap.gap.mean)
    assert gap.gap.low <= gap.gap.mean <= gap.gap.high  # two conversations: a cluster-bootstrap interval
    swapped = gap_split(table, "B", "A", n_resamples=200)
    assert swapped.retrieval.mean == pytest.approx(-retrieval) and swapped.answering.mean == pytest.approx(-answering)


def test_a_pipeline_that_never_had_the_evidence_owes_its_gap_to_retrieval_and_answering_at_the_same_share():
    table = pd.DataFrame({"label": ["A"] * 2 + ["B"] * 2, "conversation_id": ["c"] * 4, "probe_id": ["p", "q"] * 2,
                          "seed": [0] * 4, "evidence": [1.0, 1.0, 0.0, 0.0], "accuracy": [1.0, 0.0, 0.0, 0.0]})
    gap = gap_split(table, "A", "B", n_resamples=10)
    # B has no "given the evidence" group: it takes A's (0.5); A has no "without" group: it takes B's (0.0)
    assert (gap.gap.mean, gap.retrieval.mean, gap.answering.mean) == (-0.5, -0.5, 0.0)


def test_the_section_names_its_method_and_leaves_runs_without_the_rows_alone():
    section = split_section(fixture_rows(), n_resamples=100)
    text = section.markdown()
    assert "## Retrieval and answering apart" in text and "ḡ·Δs" in text and "| B | A | 6 |" in text
    assert "| A | 6 | 0.667 [" in text
    assert split_section(fixture_rows().query("metric != 'evidence_in_context'")) is None
    assert max(len(line) for line in text.splitlines() if not line.startswith("|")) < 400


def test_without_a_judge_the_split_says_f1_in_its_table_and_figure_never_accuracy(tmp_path, monkeypatch):
    rows = fixture_rows().query("metric != 'judge'").assign(**{"qa.scorer": "locomo"})
    section = split_section(rows, n_resamples=50)
    assert section is not None and (section.metric, section.name) == ("qa_f1", "F1")
    (caption, header, _), (gap_caption, gap_header, _) = section.tables
    assert header[3:6] == ["F1, evidence in", "n in", "F1, evidence not in"] and gap_header[3] == "Δ F1"
    assert caption.startswith("Evidence in context and F1 (`qa_f1`)") and gap_caption.startswith("Gap in F1")
    words = " ".join([caption, gap_caption, *header, *gap_header, *section.notes])
    assert "accuracy" not in words.lower() and "QA scorer: locomo" in words
    drawn = []
    monkeypatch.setattr(split_plot, "save", lambda fig, path: drawn.append(fig) or path)
    assert split_figure(section, None, tmp_path / "split.png") is not None
    [fig] = drawn
    labels, title = [ax.get_xlabel() for ax in fig.axes], fig._suptitle.get_text()
    assert any(label.startswith("F1 (qa_f1)") for label in labels) and "F1 (qa_f1)" in title
    assert "accuracy" not in " ".join(labels + [title]).lower()


def test_the_distance_to_the_ceilings_pairs_the_same_memory():
    rows = []
    for recaller, verdicts in (("bm25", [1, 0, 0, 0]), ("oracle", [1, 1, 1, 0]), ("full_context", [1, 1, 0, 0])):
        for i, v in enumerate(verdicts):
            rows.append({"pipeline": f"tw|{recaller}", "recaller": recaller, "cell_id": f"c{i % 2}-x",
                         "conversation_id": f"c{i % 2}", "probe_id": f"p{i}", "seed": 0, "metric": "judge",
                         "value": float(v)})
    rows.append({**rows[0], "pipeline": "other|bm25", "cell_id": "elsewhere"})  # another memory: no ceiling
    section = ceiling_section(pd.DataFrame(rows), n_resamples=100)
    [(caption, header, body)] = section.tables
    assert header == ["pipeline", "accuracy (judge)", "to full_context", "to oracle"]
    assert body == [["tw|bm25", "0.250", body[0][2], body[0][3]]]
    assert body[0][2].startswith("+0.250 [") and body[0][3].startswith("+0.500 [") and body[0][3].endswith("(n=4)")


def test_a_run_with_qa_and_the_ceilings_reports_both_sections(tmp_path):
    spec = ExperimentSpec.from_dict({
        "name": "split", "corpus": {"path": str(SYNTHETIC), "max_probes": 6},
        "grid": {"chunkers": [{"name": "turn_window", "max_turns": 1}], "recallers": ["bm25", "oracle", "full_context"]},
        "run": {"backends": ["fake"], "embedders": ["none"], "ks": [5], "score_at_tokens": [256], "cache": "off"},
        "qa": {"enabled": True, "judges": [{"prompt": "correct_wrong_v1", "backend": "fake"}]}})
    df = run_experiment(spec, tmp_path / "run", RunOptions(progress=False))
    held = df[df["metric"] == "evidence_in_context"].groupby("recaller")["value"].mean()
    assert held["oracle"] == 1.0 and held["bm25"] < 1.0  # the oracle's context holds the evidence, always
    def probes(metric):
        return set(map(tuple, df.loc[df["metric"] == metric, ["recaller", "probe_id"]].to_numpy()))
    assert probes("evidence_in_context") and probes("evidence_in_context") <= probes("judge")  # answered probes only
    write_report(tmp_path / "run", n_resamples=100)
    md = (tmp_path / "run" / "report" / "summary.md").read_text(encoding="utf-8")
    page = (tmp_path / "run" / "report" / "report.html").read_text(encoding="utf-8")
    assert "## Retrieval and answering apart" in md and "## Distance to the ceilings" in md
    assert "<h2 id=split>Retrieval and answering apart</h2>" in page and "<h2 id=ceilings>" in page
