"""The frontier (``reports._frontier``): Pareto marks on hand-made points, the section of a hand-made run, and a
small run's report with the frontier and the split drawn, every figure passing the overlap checker."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from lyra_lab.experiments import ExperimentSpec, RunOptions, run_experiment
from lyra_lab.reports import write_report
from lyra_lab.reports._frontier import FrontierPoint, frontier_section, pareto
from tests.helpers.figures import checking_figures, problems_text
from tests.systems.conftest import SYNTHETIC


def test_a_dominated_pipeline_is_named_with_what_dominates_it():
    marks = pareto([FrontierPoint("cheap", 0.6, 100), FrontierPoint("good", 0.8, 200),
                    FrontierPoint("worse", 0.5, 300), FrontierPoint("costly", 0.8, 400)])
    assert [m.label for m in marks.values() if m.frontier] == ["cheap", "good"]
    # best quality first, then least cost: good (0.8, 200), then cheap (0.6, 100)
    assert marks["worse"].dominated_by == ("good", "cheap")
    assert marks["costly"].dominated_by == ("good",)  # same quality at more cost
    assert marks["good"].dominated_by == () and marks["good"].ties == ()


def test_ties_are_both_on_the_frontier_and_name_each_other():
    marks = pareto([FrontierPoint("a", 0.7, 50), FrontierPoint("b", 0.7, 50), FrontierPoint("c", 0.7, 60)])
    assert marks["a"].frontier and marks["b"].frontier
    assert marks["a"].ties == ("b",) and marks["b"].ties == ("a",)
    assert marks["c"].dominated_by == ("a", "b")


def test_one_pipeline_is_its_own_frontier_and_a_missing_figure_is_neither():
    assert pareto([FrontierPoint("only", 0.1, 9.0)])["only"].frontier
    marks = pareto([FrontierPoint("x", 0.9, math.nan), FrontierPoint("y", 0.2, 1.0)])
    assert not marks["x"].frontier and marks["x"].dominated_by == ()
    assert marks["y"].frontier  # a point without a cost dominates nothing


def _rows(pipeline: str, recaller: str, verdicts: list[float], tokens: float, latency: float,
          answer_usd: float, build_usd: float) -> list[dict]:
    rows = []
    for i, v in enumerate(verdicts):
        base = {"pipeline": pipeline, "recaller": recaller, "conversation_id": f"c{i % 2}", "probe_id": f"p{i}",
                "seed": 0, "cell_id": "cell"}
        rows += [{**base, "metric": "judge", "value": v}, {**base, "metric": "context_tokens", "value": tokens},
                 {**base, "metric": "recall_latency_s", "value": latency},
                 {**base, "metric": "answer_latency_s", "value": 2 * latency},
                 {**base, "metric": "answer_cost_usd", "value": answer_usd}]
    for c in ("c0", "c1"):  # building the memory: dollars per conversation, spread over its probes
        rows.append({"pipeline": pipeline, "recaller": recaller, "conversation_id": c, "probe_id": "", "seed": 0,
                     "cell_id": "cell", "metric": "summarize.cost_usd", "value": build_usd})
    return rows


def _summary(df: pd.DataFrame) -> pd.DataFrame:
    judged = df[df["metric"] == "judge"].groupby("pipeline")["value"]
    return pd.DataFrame({"pipeline": judged.mean().index, "judge": judged.mean().to_numpy(),
                         "judge_ci_low": judged.min().to_numpy(), "judge_ci_high": judged.max().to_numpy(),
                         "judge_n": judged.size().to_numpy()})


def test_the_section_names_dominators_per_axis_and_keeps_ceilings_out():
    df = pd.DataFrame(_rows("m|bm25", "bm25", [1, 1, 0, 0], 100, 0.01, 0.001, 0.0)
                      + _rows("m|dense", "dense", [1, 0, 0, 0], 200, 0.005, 0.001, 0.002)
                      + _rows("m|oracle", "oracle", [1, 1, 1, 1], 20, 0.001, 0.0, 0.0))
    section = frontier_section(_summary(df), df, "judge", ceilings=["oracle"])
    assert section is not None and section.axes == ["tokens", "latency", "dollars"]
    by = {p.label: p for p in section.pipelines}
    assert by["m|dense"].latency == pytest.approx(0.015)  # recall + answering, the registry's timings
    assert by["m|dense"].dollars == pytest.approx(0.001 + 2 * 0.002 / 4)  # answering + the build over 4 probes
    (_, header, rows), = section.tables
    table = {r[0]: dict(zip(header, r)) for r in rows}
    # bm25 is cheaper and better on means, but on 2 conversations its paired difference's CI holds 0
    assert table["m|dense"]["on context tokens"] == ("dominated on means by m|bm25, not significant: "
                                                     "Δ +0.250 [+0.000, +0.500], p=1, n=4")
    assert table["m|dense"]["on latency"] == "frontier"  # faster, if less accurate
    assert table["m|bm25"]["on dollars"] == "frontier"
    assert table["m|oracle"]["on latency"] == "ceiling (not a contender)"  # better and cheaper, yet no dominator
    standings = [table[p][c] for p in ("m|bm25", "m|dense") for c in header if c.startswith("on ")]
    assert standings and not any("oracle" in s for s in standings)


def _spread(rows: list[dict], conversations: int) -> list[dict]:
    """``rows`` with probe i in conversation ``c{i % conversations}`` (the build rows kept as they are)."""
    return [{**r, "conversation_id": f"c{int(r['probe_id'][1:]) % conversations}"} if r["probe_id"] else r
            for r in rows]


def test_dominated_means_dominated_only_when_the_paired_ci_excludes_0():
    # means dominate in every run; only "clear" has the evidence: better by 0.5 in each of 6 conversations
    noisy = pd.DataFrame(_spread(_rows("m|bm25", "bm25", [1, 0, 1, 0, 1, 0, 1, 1], 100, 0.01, 0.0, 0.0)
                                 + _rows("m|dense", "dense", [0, 1, 1, 0, 0, 1, 1, 0], 200, 0.02, 0.0, 0.0), 4))
    clear = pd.DataFrame(_spread(_rows("m|bm25", "bm25", [1] * 12, 100, 0.01, 0.0, 0.0)
                                 + _rows("m|dense", "dense", [0] * 6 + [1] * 6, 200, 0.02, 0.0, 0.0), 6))
    # the same on 2 conversations: the bootstrap's CI lies above 0, but 2 clusters never reach p < 0.05
    two = pd.DataFrame(_spread(_rows("m|bm25", "bm25", [1] * 4, 100, 0.01, 0.0, 0.0)
                               + _rows("m|dense", "dense", [0] * 2 + [1] * 2, 200, 0.02, 0.0, 0.0), 2))
    cells = {}
    for name, df in (("noisy", noisy), ("clear", clear), ("two", two)):
        section = frontier_section(_summary(df), df, "judge", n_resamples=200)
        assert section is not None
        (_, header, rows), = section.tables
        cells[name] = {r[0]: dict(zip(header, r)) for r in rows}["m|dense"]["on context tokens"]
        mark = section.marks["tokens"]["m|dense"]
        assert mark.dominated_by == ("m|bm25",) and not mark.frontier  # the means say dominated either way
        assert any("bootstrap resampling whole conversations" in n for n in section.notes)
    assert cells["noisy"].startswith("dominated on means by m|bm25, not significant: Δ +0.125 [-")
    assert cells["noisy"].endswith("n=8")
    assert cells["clear"] == "dominated by m|bm25: Δ +0.500 [+0.500, +0.500], p=0.031, n=12"  # 2/2^6
    assert cells["two"] == "dominated on means by m|bm25, not significant: Δ +0.500 [+0.500, +0.500], p=0.5, n=4"


def test_the_same_quality_on_every_probe_at_less_cost_is_dominance_shown():
    df = pd.DataFrame(_rows("m|short", "bm25", [1, 0, 1, 0], 100, 0.01, 0.0, 0.0)
                      + _rows("m|long", "dense", [1, 0, 1, 0], 300, 0.01, 0.0, 0.0))
    section = frontier_section(_summary(df), df, "judge", n_resamples=100)
    assert section is not None
    mark = section.marks["tokens"]["m|long"]
    assert mark.shown_by == ("m|short",)  # Δ = 0 in every resample, strictly cheaper
    assert section.marks["latency"]["m|long"].frontier  # equal on both: ties, both on the frontier


def test_costs_of_zero_dollars_are_said_not_drawn():
    df = pd.DataFrame(_rows("m|bm25", "bm25", [1, 0], 100, 0.01, 0.0, 0.0)
                      + _rows("m|dense", "dense", [1, 1], 200, 0.02, 0.0, 0.0))
    section = frontier_section(_summary(df), df, "judge")
    assert section is not None and section.axes == ["tokens", "latency"]
    assert any("$0" in note and "no dollars axis" in note for note in section.notes)


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    spec = ExperimentSpec.from_dict({
        "name": "frontier", "corpus": {"path": str(SYNTHETIC), "max_probes": 6},
        "grid": {"chunkers": [{"name": "turn_window", "max_turns": 1}],
                 "recallers": ["bm25", {"name": "bm25", "stemmer": "english"}, "oracle", "full_context"]},
        "run": {"backends": ["fake"], "embedders": ["none"], "ks": [5], "score_at_tokens": [256], "cache": "off"},
        "qa": {"enabled": True, "judges": [{"prompt": "correct_wrong_v1", "backend": "fake"}]}})
    out = tmp_path_factory.mktemp("frontier") / "run"
    run_experiment(spec, out, RunOptions(progress=False))
    with checking_figures() as figures:
        paths = write_report(out, n_resamples=50)
    return out, paths, figures


def test_a_small_runs_report_has_the_frontier_and_the_split_drawn(reported):
    out, paths, figures = reported
    names = {p.name for p in paths}
    assert {"frontier.png", "retrieval_and_answering.png"} <= names
    md = (out / "report" / "summary.md").read_text(encoding="utf-8")
    page = (out / "report" / "report.html").read_text(encoding="utf-8")
    assert "## Frontier: quality against cost" in md and "![frontier](frontier.png)" in md
    assert "![retrieval_and_answering](retrieval_and_answering.png)" in md
    assert "ceiling (not a contender)" in md and "no dollars axis" in md  # the fake backend costs nothing
    frontier = page[page.index("<h2 id=frontier>"):]
    assert '<img alt="frontier"' in frontier.split("<h2", 2)[1]  # the figure sits in its own section
    split = page[page.index("<h2 id=split>"):]
    assert '<img alt="retrieval_and_answering"' in split.split("<h2", 2)[1]
    checked = {f.file.rsplit("/", 1)[-1] for f in figures}
    assert {"frontier.png", "retrieval_and_answering.png"} <= checked
    assert problems_text(figures) == ""


def test_pipelines_at_one_cost_whose_error_bars_overlap_are_drawn_a_marker_apart():
    from lyra_lab.reports._figures import new_figure
    from lyra_lab.reports._frontier_plot import DODGE_PT, _offsets

    fig = new_figure(figsize=(6, 3))
    ax = fig.subplots()
    ax.set_xlim(60, 320)
    ax.set_ylim(0, 0.3)
    # LoCoMo's split run: three recallers filling the same 300-token budget, their CIs overlapping in height
    points = {"hybrid": (298.0, 0.089, 0.014, 0.189), "dense": (299.0, 0.076, 0.018, 0.154),
              "bm25": (300.0, 0.013, 0.0, 0.032), "oracle": (74.0, 0.130, 0.030, 0.248)}
    offsets = _offsets(ax, points)
    width_pt = ax.get_position().width * fig.get_figwidth() * 72
    x_pt = {k: (v[0] - 60) / 260 * width_pt + offsets.get(k, 0.0) for k, v in points.items()}
    near = sorted(x_pt[k] for k in ("hybrid", "dense", "bm25"))
    assert min(b - a for a, b in zip(near, near[1:])) >= DODGE_PT - 1e-6
    assert abs(offsets.get("oracle", 0.0)) < 1e-6  # far from the others: where it is


def test_pipelines_crowded_at_a_panels_edge_are_spread_inside_it():
    """Many pipelines at the largest cost and one quality (the 100-pipeline grid's (1000, 0)): all seen."""
    from lyra_lab.reports._figures import new_figure
    from lyra_lab.reports._frontier_plot import DODGE_PT, _offsets

    fig = new_figure(figsize=(3, 3))
    ax = fig.subplots()
    ax.set_xlim(0, 1080)
    ax.set_ylim(-0.01, 0.3)
    points = {f"p{i}": (1000.0 + i, 0.0, 0.0, 0.0) for i in range(12)}
    offsets = _offsets(ax, points)
    width_pt = ax.get_position().width * fig.get_figwidth() * 72
    x_pt = sorted(v[0] / 1080 * width_pt + offsets[k] for k, v in points.items())
    assert x_pt[-1] <= width_pt + 1e-6 and x_pt[0] >= -1e-6  # inside the panel
    assert min(b - a for a, b in zip(x_pt, x_pt[1:])) >= DODGE_PT - 1e-6  # and a marker apart


@pytest.mark.parametrize("width", [2.2, 3.3, 5.0, 10.0])
@pytest.mark.parametrize("low,high", [(5e-5, 4e-3), (0.7, 30.0), (2e-4, 9e-2), (12.0, 95.0), (1e-3, 1e3)])
def test_log_tick_labels_never_touch_whatever_the_span_and_width(width, low, high):
    """The fake backend's latencies (~0.1 ms to a few ms) on a narrow panel once wrote 0.0001 over 0.0002."""
    from lyra_lab.reports import figure_problems
    from lyra_lab.reports._figures import log_axis, new_figure

    fig = new_figure(figsize=(width * 3, 3), layout="constrained")
    axes = fig.subplots(1, 3)
    for ax in axes:
        ax.plot([low, high], [0, 1], "o")
        ax.set_xlim(low, high)
        log_axis(ax.xaxis)
        ax.tick_params(labelsize=8)
    assert [str(p) for p in figure_problems(fig)] == []
    assert all(len([t for t in ax.get_xticks() if low <= t <= high]) >= 2 for ax in axes)


def test_latency_and_tokens_are_over_the_probes_the_quality_scored():
    """A run answering a sample: 4 probes answered (recall 0.01 s + answer 0.02 s), 4 only recalled (0.01 s).

    The frontier's quality is the answered probes' judge, so its latency is theirs, 0.03 s (the demo's QA
    stage said 1.6 s against answers of ~10 s when every recalled probe was averaged in).
    """
    answered = _rows("m|bm25", "bm25", [1, 1, 0, 0], 100, 0.01, 0.0, 0.0)
    recalled = [{"pipeline": "m|bm25", "recaller": "bm25", "conversation_id": f"c{i % 2}", "probe_id": f"r{i}",
                 "seed": 0, "cell_id": "cell", "metric": metric, "value": value}
                for i in range(4) for metric, value in (("context_tokens", 500.0), ("recall_latency_s", 0.01))]
    df = pd.DataFrame(answered + recalled)
    section = frontier_section(_summary(df), df, "judge")
    assert section is not None
    (point,) = section.pipelines
    assert point.latency == pytest.approx(0.03)
    assert point.tokens == pytest.approx(100.0)
