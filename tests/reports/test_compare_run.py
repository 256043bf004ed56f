"""compare / compare_all on the rows of a real (fake-backend) run: 3 conversations, 2 seeds."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from lyra_lab.synthetic import generate_synthetic
from lyra_lab.reports import write_report
from lyra_lab.stats import compare, compare_all
from lyra_lab.runs import load_results
from lyra_lab.experiments import ExperimentSpec, run_experiment

DENSE, BM25 = "turn_window+single_pass+none|dense", "turn_window+single_pass+none|bm25"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("run")
    corpus = generate_synthetic(0, conversations=3).save(folder / "corpus.jsonl")
    spec = ExperimentSpec.from_dict({
        "name": "pairs", "corpus": {"path": str(corpus), "max_sessions": 3, "max_probes": 4},
        "grid": {"chunkers": [{"name": "turn_window", "max_turns": 4}], "summarizers": ["single_pass"],
                 "recallers": ["dense", "bm25"]},
        "run": {"backends": ["fake"], "embedders": ["hashing"], "ks": [1, 5], "cache": "off", "seeds": [0, 1]}})
    out = folder / "run"
    run_experiment(spec, out)
    return out


def test_compare_on_real_rows_matches_a_direct_computation(run_dir):
    df = load_results(run_dir)
    assert sorted(df["seed"].unique()) == [0, 1] and df["conversation_id"].nunique() == 3
    result = compare(df, DENSE, BM25, "mrr", n_boot=200)
    # independently: dense − bm25 per (probe, seed), averaged over seeds, summed per conversation
    part = df[df["metric"] == "mrr"].pivot(index=["conversation_id", "probe_id", "seed"], columns="pipeline",
                                           values="value").dropna()
    per_probe = (part[DENSE] - part[BM25]).groupby(level=["conversation_id", "probe_id"]).mean()
    sums = per_probe.groupby(level="conversation_id").sum().tolist()
    flips = [abs(sum(s * x for s, x in zip(signs, sums))) >= abs(sum(sums)) - 1e-12
             for signs in itertools.product((1, -1), repeat=len(sums))]
    assert result.difference == pytest.approx(per_probe.mean())
    assert result.n_probes == len(per_probe) and result.n_clusters == 3
    assert result.p_value == pytest.approx(sum(flips) / len(flips))
    assert result.ci_low <= result.difference <= result.ci_high
    table = compare_all(df, "mrr", n_boot=200).set_index("pipeline")
    assert set(table.index) == {DENSE, BM25} and table["n_probes"].max() == len(per_probe)


def test_report_of_the_run_has_the_paired_section(run_dir):
    paths = write_report(run_dir, n_resamples=100)
    assert {"paired_comparisons.csv", "paired_differences.png"} <= {p.name for p in paths}
    table = pd.read_csv(run_dir / "report" / "paired_comparisons.csv")
    assert len(table) == 2 and table["n_clusters"].tolist() == [3, 3]
    md = (run_dir / "report" / "summary.md").read_text()
    assert "## Paired comparisons: " in md and "smallest possible p is 2/2^3 = 0.25" in md
