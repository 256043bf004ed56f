"""The README's "What it shows" paragraph is what ``benchmarks/readme_figure.py`` writes from the demo's figures.

``docs/figures/demo_headline.csv`` is the benchmark's output (the demo report's lead metric per
pipeline with its paired comparison to the best); the README must say what ``demo_sentence`` says
of it, and the committed run must be the comparison issue 46 asks of the demo: n >= 50 answerable
probes, a best pipeline whose CI has width, and a paired difference that holds after Holm.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def readme_figure():
    spec = importlib.util.spec_from_file_location("readme_figure", ROOT / "benchmarks" / "readme_figure.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_says_what_the_committed_demo_run_shows(readme_figure):
    table = pd.read_csv(readme_figure.HEADLINE)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme_figure.readme_block(readme) == readme_figure.demo_sentence(table)
    assert max(len(line) for line in readme_figure.demo_sentence(table).splitlines()) <= 100


def test_the_committed_demo_run_is_a_comparison_a_reader_can_believe(readme_figure):
    table = pd.read_csv(readme_figure.HEADLINE)
    best = table[table["pipeline"] == table["best"]].iloc[0]
    assert best["n"] >= 50 and (table["n"] == best["n"]).all()
    assert best["ci_low"] < best["mean"] < best["ci_high"]  # not degenerate
    held = table[(table["p_holm"] < readme_figure.ALPHA) & (table["difference"] < 0)]
    assert len(held) >= 1 and (held["diff_ci_high"] < 0).all()


def test_the_sentence_follows_its_table(readme_figure):
    """Hand-built rows: the numbers in the sentence are the table's, and no held difference is claimed without one."""
    rows = pd.DataFrame({
        "pipeline": ["a+raw=yes|dense", "a+raw=no|dense", "a+raw=yes|bm25"],
        "best": "a+raw=yes|dense", "metric": "answer_in_context@512tok",
        "difference": [0.0, -0.5, -0.04], "diff_ci_low": [None, -0.6, -0.1], "diff_ci_high": [None, -0.4, 0.02],
        "p_holm": [None, 0.008, 0.4], "n_probes": 60, "n_clusters": 8,
        "mean": [0.9, 0.4, 0.86], "ci_low": [0.82, 0.3, 0.77], "ci_high": [0.96, 0.52, 0.93], "n": 60})
    text = " ".join(readme_figure.demo_sentence(rows).split())
    assert "40% of the 60 answerable probes" in text and "86–90%" in text and "0.90 [0.82, 0.96]" in text
    assert "1 of the 2 other pipelines are worse than the best by 0.50, each difference holding" in text and "p ≤ 0.008" in text
    rows.loc[1, "p_holm"] = 0.2
    assert "No pipeline is worse than the best after Holm" in " ".join(readme_figure.demo_sentence(rows).split())
