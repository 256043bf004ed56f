"""compare_runs and `lyra-lab compare` on hand-made run folders whose differences are known exactly.

Run A has pipelines m|bm25 and m|dense; run B has m|bm25. Probes q1..q5 are in both runs, each in a
conversation of its own (c1..c5); q6 is only in A, q7 only in B. evidence_recall@5 per probe:

    probe      q1 q2 q3 q4 q5   (q6, q7)
    A m|bm25    1  1  1  1  0    A: q6 1
    A m|dense   0  0  0  0  0    A: q6 1
    B m|bm25    1  1  1  1  1    B: q7 0

On the five shared probes B/m|bm25 is best (mean 1). A/m|bm25 − best: (0, 0, 0, 0, −1), mean −0.2; its
conversation sums are 0 but one −1, so every sign pattern reaches |1|: p = 1. A/m|dense − best: −1 in
each of the 5 conversations, mean −1; only the 2 all-same-sign patterns of 2^5 reach |5|: p = 2/32 =
0.0625. Holm over 2 comparisons: 0.0625 × 2 = 0.125, then max(0.125, 1 × 1) = 1.
"""

from __future__ import annotations

import pandas as pd
import pytest

from lyra_lab._errors import ConfigError
from lyra_lab.cli import main
from lyra_lab.reports import compare_runs
from lyra_lab.runs import CellRows, RunFolder, load_results
from lyra_lab.stats import compare_all

METRIC = "evidence_recall@5"
VALUES = {
    "A": {"m|bm25": [1, 1, 1, 1, 0, 1], "m|dense": [0, 0, 0, 0, 0, 1]},
    "B": {"m|bm25": [1, 1, 1, 1, 1, 0]},
}


def make_run(folder, run: str, values: dict[str, list[float]], *, corpus_sha: str = "same-corpus",
             seeds: tuple[int, ...] = (0,), seed_values=None):
    """A run folder whose probes are q1..q5 and, last, q6 (run A) or q7 (run B), each in its own conversation."""
    own = "q6" if run == "A" else "q7"
    probes = ["q1", "q2", "q3", "q4", "q5", own]
    run_folder = RunFolder(folder)
    run_folder.prepare()
    run_folder.write_spec({"name": folder.name, "corpus_sha256": corpus_sha})
    for i, (pipeline, per_probe) in enumerate(values.items()):
        records = []
        for seed in seeds:
            for probe, value in zip(probes, per_probe):
                if seed_values is not None:
                    value = seed_values(pipeline, probe, seed, value)
                records.append({"run": folder.name, "cell_id": f"cell{i}-{seed}", "pipeline": pipeline,
                                "backend": "fake", "embedder": "hashing", "seed": seed,
                                "conversation_id": "c" + probe[1:], "probe_id": probe, "category": "1",
                                "metric": METRIC, "value": float(value), "simulated": False})
                records.append({**records[-1], "metric": "mrr", "value": 0.5})
            run_folder.write_rows(f"cell{i}-{seed}", CellRows.from_records(records[-2 * len(probes):]))
    return folder


@pytest.fixture
def runs(tmp_path):
    return make_run(tmp_path / "runA", "A", VALUES["A"]), make_run(tmp_path / "runB", "B", VALUES["B"])


def test_two_runs_are_compared_on_the_probes_both_asked(runs, tmp_path):
    a, b = runs
    result = compare_runs(a, b, metric=METRIC, out=tmp_path / "out", n_resamples=200)
    table = result.section.table.set_index("pipeline")
    assert result.runs == ("runA", "runB") and result.shared_probes == 5 and result.only_in == {"runA": 1, "runB": 1}
    assert list(table.index) == ["runB/m|bm25", "runA/m|bm25", "runA/m|dense"]  # best first, then by mean
    assert table.loc["runA/m|bm25", "difference"] == pytest.approx(-0.2)
    assert table.loc["runA/m|dense", "difference"] == pytest.approx(-1.0)
    assert table.loc["runA/m|bm25", "p_value"] == 1.0 and table.loc["runA/m|dense", "p_value"] == pytest.approx(2 / 32)
    assert table.loc["runA/m|dense", "p_holm"] == pytest.approx(0.125) and table.loc["runA/m|bm25", "p_holm"] == 1.0
    assert (table.loc["runA/m|dense", ["n_probes", "n_clusters"]] == [5, 5]).all()
    assert {p.name for p in result.section.files} == {"paired_comparisons.csv", "paired_differences.png"}
    saved = pd.read_csv(tmp_path / "out" / "paired_comparisons.csv")
    assert saved["pipeline"].tolist() == list(table.index)
    md = result.markdown()
    assert "5 probes asked in both (1 only in runA; 1 only in runB, left out)" in md and "same corpus" in md
    assert "Holm-adjusted over 2 comparisons" in md


def test_one_folder_is_the_in_run_comparison(runs, tmp_path):
    a, _ = runs
    result = compare_runs(a, metric="evidence_recall@5", out=tmp_path / "one", n_resamples=200)
    expected = compare_all(load_results(a, write=False), METRIC, cluster="conversation_id", n_boot=200)
    pd.testing.assert_frame_equal(result.section.table.reset_index(drop=True), expected)
    assert result.runs == ("runA",) and result.shared_probes == 6


def test_runs_of_different_corpora_are_refused_in_one_line(tmp_path, capsys):
    a = make_run(tmp_path / "runA", "A", VALUES["A"])
    b = make_run(tmp_path / "runB", "B", VALUES["B"], corpus_sha="another-corpus")
    with pytest.raises(ConfigError, match="replay different corpora"):
        compare_runs(a, b)
    assert main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "different corpora" in err


def test_runs_that_share_no_probe_are_refused(tmp_path):
    a = make_run(tmp_path / "runA", "A", VALUES["A"])
    b = RunFolder(tmp_path / "runB")
    b.prepare()
    b.write_spec({"name": "runB", "corpus_sha256": "same-corpus"})
    b.write_rows("x", CellRows.from_records([{"run": "runB", "cell_id": "x", "pipeline": "m|bm25", "seed": 0,
                                               "conversation_id": "c9", "probe_id": "q9", "metric": METRIC,
                                               "value": 1.0}]))
    with pytest.raises(ConfigError, match="share no probe"):
        compare_runs(a, tmp_path / "runB")


def test_a_metric_one_run_lacks_is_named(runs):
    a, b = runs
    with pytest.raises(ConfigError, match=r"no per-probe 'qa_f1' rows to compare; it has: evidence_recall@5, mrr"):
        compare_runs(a, b, metric="qa_f1")


def test_runs_of_different_seeds_pair_each_probes_seed_average(tmp_path):
    """B ran seeds 0 and 1: its m|bm25 scores 1 at seed 0 and 0 at seed 1 on q5, so q5 averages 0.5 there."""
    a = make_run(tmp_path / "runA", "A", {"m|bm25": VALUES["A"]["m|bm25"]})
    b = make_run(tmp_path / "runB", "B", VALUES["B"], seeds=(0, 1),
                 seed_values=lambda pipeline, probe, seed, value: 0.0 if (probe, seed) == ("q5", 1) else value)
    result = compare_runs(a, b, metric=METRIC, out=tmp_path / "out", n_resamples=100)
    table = result.section.table.set_index("pipeline")
    # best: B (1, 1, 1, 1, 0.5) mean 0.9; A (1, 1, 1, 1, 0) − B = (0, 0, 0, 0, −0.5): mean −0.1
    assert table.index[0] == "runB/m|bm25" and table.loc["runA/m|bm25", "difference"] == pytest.approx(-0.1)
    assert "different seeds" in result.markdown()


def test_compare_command_prints_the_table_and_writes_the_figure(runs, tmp_path, capsys):
    a, b = runs
    assert main(["compare", str(a), str(b), "--metric", METRIC, "--resamples", "100"]) == 0
    out = capsys.readouterr().out
    assert "## Paired comparisons: evidence_recall@5" in out and "runA/m\\|dense" in out and "| -1.000 |" in out
    folder = tmp_path / "compare-runA-vs-runB"
    assert (folder / "paired_differences.png").stat().st_size > 1000 and str(folder) in out


def test_compare_command_refuses_the_same_folder_twice(runs, capsys):
    a, _ = runs
    assert main(["compare", str(a), str(a)]) == 2
    assert "is given twice" in capsys.readouterr().err
