"""Every figure of a demo-shaped report is legible: no overlapping text, no series drawn but unseen.

The run is the demo's own grid (``lyra_lab/experiments/demo.toml``: single_pass × keep_raw yes/no ×
3 recallers and the 2 ceilings, its QA stage answering) plus a second chunker, which under single_pass builds the same memories (aliases, so
identical pipelines are there to be drawn once), on the ``fake`` backend and the ``hashing`` embedder,
so it needs no LLM. Each figure is checked as ``write_report`` prints it (``tests/helpers/figures.py``).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pandas as pd
import pytest

from lyra_lab.commands.demo import demo_spec_path
from lyra_lab.experiments import ExperimentSpec, RunOptions, run_experiment
from lyra_lab.reports import write_report
from lyra_lab.reports._latency_plot import phase_measurements
from tests.helpers.figures import checking_figures, problems_text


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    path = demo_spec_path()
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data["run"].update(backends=["fake"], embedders=["hashing"], cache="off")
    data["grid"]["chunkers"].append({"name": "turn_window", "max_turns": 8})  # aliases of the demo's pipelines
    spec = ExperimentSpec.from_dict(data, base_dir=path.parent, default_name="demo")
    out = tmp_path_factory.mktemp("demo") / "run"
    run_experiment(spec, out, RunOptions(progress=False))
    return out


@pytest.fixture(scope="module")
def checked(demo_run):
    with checking_figures() as figures:
        paths = write_report(demo_run, n_resamples=100)
    return paths, figures


def test_every_figure_of_the_demo_report_is_checked_and_legible(checked):
    paths, figures = checked
    pngs = {p.name for p in paths if p.suffix == ".png"}
    assert pngs == {"quality_vs_cost.png", "by_category.png", "quality_vs_context_tokens.png", "latency.png",
                    "paired_differences.png", "frontier.png", "retrieval_and_answering.png"}  # the demo answers
    assert {f.file.rsplit("/", 1)[-1] for f in figures} == pngs
    assert problems_text(figures) == ""


def test_identical_pipelines_are_drawn_once(demo_run, monkeypatch, tmp_path):
    """quality_vs_context_tokens: a panel has one line per distinct series of means and CIs, not one per pipeline."""
    from lyra_lab.reports import _plots
    from lyra_lab.reports._frames import budget_frame
    from lyra_lab.runs import load_results
    from lyra_lab.stats import aggregate

    seen = []
    monkeypatch.setattr(_plots, "save", lambda fig, path: seen.append(fig) or path)
    df = load_results(demo_run, write=False)
    _plots.quality_vs_context_tokens(df, "answer_in_context", {}, tmp_path / "q.png", n_resamples=100)
    rows = budget_frame(df)
    agg = aggregate(rows[rows["metric_base"] == "answer_in_context"], by=["pipeline", "budget_tokens"],
                    n_resamples=100)
    agg["recaller"] = agg["pipeline"].str.partition("|")[2]
    for ax in seen[0].axes:
        if not ax.get_visible():
            continue
        recaller = ax.get_title().removeprefix("recaller: ")
        part = agg[agg["recaller"] == recaller].sort_values("budget_tokens")
        distinct = part.groupby("pipeline")[["mean", "ci_low", "ci_high"]].apply(
            lambda g: tuple(g.round(9).to_numpy().ravel())).nunique()
        lines = [line for line in ax.lines if line.get_linestyle() == "-" and len(line.get_xdata()) > 1]
        assert len(lines) == distinct < part["pipeline"].nunique() == 4
        assert len(ax.texts) == distinct  # one direct label per line


def test_each_distinct_latency_is_one_measurement():
    """A summarize latency repeated under three recallers is one value of its memory, not three."""
    rows = []
    for recaller in ("dense", "bm25", "hybrid"):
        for memory, seconds in (("a+single_pass+none", 2.0), ("b+single_pass+none", 5.0)):
            rows.append({"pipeline": f"{memory}|{recaller}", "conversation_id": "c1", "seed": 0, "probe_id": "",
                         "metric": "summarize.latency_s", "value": seconds})
        rows += [{"pipeline": f"a+single_pass+none|{recaller}", "conversation_id": "c1", "seed": 0,
                  "probe_id": f"q{i}", "metric": "recall_latency_s", "value": 0.001 * (i + 1)} for i in range(3)]
        rows.append({"pipeline": f"a+single_pass+none|{recaller}", "conversation_id": "c1", "seed": 0,
                     "probe_id": "", "metric": "embed.latency_s", "value": 0.0 if recaller == "bm25" else 0.2})
    phases = {p.name: p for p in phase_measurements(pd.DataFrame(rows))}
    summarize = phases["summarize"]
    assert summarize.level == "memory" and sorted(summarize.values["value"]) == [2.0, 5.0]
    assert set(summarize.values["row"]) == {"a+single_pass+none", "b+single_pass+none"}
    # recall is per probe: three recallers × three probes, each its own measurement
    assert phases["recall"].level == "pipeline" and len(phases["recall"].values) == 9
    # embed differs between recallers of one memory (bm25 embeds nothing): per pipeline, its zero left out
    assert phases["embed"].level == "pipeline" and len(phases["embed"].values) == 2 and phases["embed"].zeros == 1


def test_a_grid_of_a_hundred_pipelines_still_draws_legible_figures(tmp_path):
    """5 chunkers × 2 summarizers × keep_raw × 5 recallers: pooled latency rows, at most 8 lines a panel."""
    spec = ExperimentSpec.from_dict({
        "name": "wide", "corpus": {"path": str(Path(__file__).resolve().parents[2] / "datasets" / "synthetic_small.jsonl"),
                                   "conversations": 2, "max_sessions": 8},
        "grid": {"chunkers": [{"name": "token_budget", "max_tokens": 64}, {"name": "token_budget", "max_tokens": 256},
                              {"name": "turn_window", "max_turns": 2}, {"name": "turn_window", "max_turns": 8},
                              {"name": "overlap_window", "max_tokens": 128, "overlap_tokens": 32}],
                 "summarizers": ["none", {"name": "single_pass", "max_tokens": 64}], "keep_raw": [True, False],
                 "recallers": ["dense", "bm25", "hybrid", "recency", "reference"]},
        "run": {"backends": ["fake"], "embedders": ["hashing"], "cache": "off"}, "qa": {"enabled": True,
                                                                                       "max_probes": 4}})
    run_experiment(spec, tmp_path / "run", RunOptions(progress=False))
    with checking_figures() as figures:
        write_report(tmp_path / "run", n_resamples=100)
    assert len(figures) == 7 and problems_text(figures) == ""  # the split and the frontier too: QA ran
    titles = " ".join(f.title for f in figures)
    assert "at most 8 lines a panel" in titles
    assert "12 of 100 pipelines drawn" in titles and "the 16 most accurate of 100 pipelines" in titles
