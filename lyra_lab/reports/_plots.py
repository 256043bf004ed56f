"""The report's quality figures: quality against memory-building cost, and against context tokens.

Both follow ``_legible``: pipelines with identical results are drawn once and labelled as a
group, every point or line is labelled directly beside the axes (no legend to match colours
against), values resting on fewer than ``SMALL_N`` probes are hollow, and the title gives n.
One panel per recaller, two panels a row.  Points sit at their true x (never jittered).
"""

from __future__ import annotations

from pathlib import Path
from typing import Unpack

import numpy as np
import pandas as pd

from lyra_lab.reports._figures import (
    FIGURE_WIDTH,
    bottom_axes,
    error_bars,
    fit_text,
    new_figure,
    panel_grid,
    save,
    simulated_note,
    split_pipeline,
    stable_colors,
    wrap_label,
)
from lyra_lab.reports._legible import (
    LineLabel,
    Estimate,
    ci_point,
    is_small,
    group_identical,
    label_lines,
    n_phrase,
    short_labels,
    small_note,
)
from lyra_lab.stats import ResamplingOptions, aggregate

MAX_LINES = 8  # lines a panel can hold legibly; past this, the best ones (every figure is in metrics.csv)
DODGE_PT = 4.0  # points between the lines of a panel at one budget: about a marker's width


def _cost_axis(df: pd.DataFrame) -> tuple[pd.Series, str]:
    """Memory-building cost per pipeline (dollars, else tokens, else context tokens) and its axis label."""
    conv = df[df["metric"].isin(["summarize.cost_usd", "rollup.cost_usd"])]
    unit = "USD per conversation (summarize + rollup)"
    if conv.empty or conv["value"].abs().sum() == 0:
        conv = df[df["metric"].str.match(r"^(summarize|rollup)\.(prompt|completion)_tokens$")]
        unit = "LLM tokens per conversation (summarize + rollup)"
    if conv.empty or conv["value"].abs().sum() == 0:
        conv, unit = df[df["metric"] == "context_tokens"], "context tokens per probe"
    if "conversation_id" in conv.columns and unit != "context tokens per probe":
        # sum the phases of one replay (conversation × seed), then average over replays
        replay = ["pipeline", "conversation_id"] + (["seed"] if "seed" in conv.columns else [])
        return conv.groupby(replay, dropna=False)["value"].sum().groupby("pipeline").mean(), unit
    return conv.groupby("pipeline")["value"].mean(), unit


def _limits(low: pd.Series, high: pd.Series) -> tuple[float, float]:
    """Y limits: [0, 1] with a margin for shares, else the data's range with one."""
    lo, hi = float(np.nanmin(low)), float(np.nanmax(high))
    if lo >= 0 and hi <= 1:
        return -0.04, 1.04
    pad = 0.06 * (hi - lo or 1.0)
    return lo - pad, hi + pad


def quality_vs_cost(df: pd.DataFrame, metric: str, simulated: dict[str, bool], path: Path) -> Path | None:
    """``metric`` (mean, 95% CI) per memory pipeline, rows ordered by the cost of building that memory.

    One panel per recaller, side by side on the same rows, so a row reads across recallers; the
    row label carries the memory's cost.  Memories whose cost and every recaller's result
    coincide share a row, labelled as a group.
    """
    quality = aggregate(df[df["metric"] == metric], by=["pipeline"])
    if quality.empty:
        return None
    x, unit = _cost_axis(df)
    quality["cost"] = [float(x.get(p, 0.0)) for p in quality["pipeline"]]
    quality["memory"], quality["facet"] = zip(*(split_pipeline(p) for p in quality["pipeline"]))
    short, shared = short_labels(sorted(quality["memory"].unique()))
    quality["short"] = quality["memory"].map(short)
    facets = sorted(quality["facet"].unique())
    cost = quality.groupby("short")["cost"].first()
    series = {}
    for memory in sorted(cost.index, key=lambda m: (cost[m], m)):
        mine = quality[quality["short"] == memory].set_index("facet").reindex(facets)
        series[memory] = [cost[memory], *mine["mean"], *mine["ci_low"], *mine["ci_high"], *mine["n"],
                          any(simulated.get(str(p), False) for p in mine["pipeline"].dropna())]
    groups = group_identical(series, universe=list(short.values()))
    ncols = min(3, len(facets))
    nrows = -(-len(facets) // ncols)
    labels = [f"{wrap_label(g.label, 34)}\n{_cost_text(cost[g.first], unit)}" for g in groups]
    lines = sum(label.count("\n") + 1 for label in labels)
    fig = new_figure(figsize=(FIGURE_WIDTH, nrows * (0.7 + 0.15 * lines + 0.08 * len(groups)) + 1.2),
                     layout="constrained")
    axes = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False)
    for ax in axes.flat[len(facets):]:
        ax.set_visible(False)
    y = np.arange(len(groups))[::-1]
    xlim = _limits(quality["ci_low"].fillna(quality["mean"]), quality["ci_high"].fillna(quality["mean"]))
    for ax, facet in zip(axes.flat, facets):
        part = quality[quality["facet"] == facet].set_index("short")
        for yi, group in zip(y, groups):
            if group.first in part.index:
                row = part.loc[group.first]
                ci_point(ax, Estimate.of(row), yi, "C0", horizontal=True, ms=6)
        ax.set_title(f"recaller: {facet}" if facet else "memory systems (no recaller)", fontsize=10)
        ax.set_xlim(*xlim)
        ax.grid(axis="x", alpha=0.3)
        ax.set_yticks(y, labels, fontsize=7.5)
        ax.set_ylim(-0.6, len(groups) - 0.4)
        ax.set_xlabel(f"{metric}\n(mean, 95% CI)", fontsize=8)
        ax.xaxis.set_tick_params(labelbottom=True)  # every panel has its own x label: its ticks too
    notes = [f"{n_phrase(quality['n'])}{small_note(quality['n'])}",
             "identical memories share a row (×N; * = every value the run has)"
             + (f"; labels omit what all share: {shared}" if shared else "")]
    fig.suptitle(fit_text(f"{metric} per memory pipeline, the cheapest to build at the top"
                          f"{simulated_note(simulated, quality['pipeline'], 'some results')}\n" + " · ".join(notes),
                          FIGURE_WIDTH, 10), fontsize=10)
    return save(fig, path)


def _cost_text(value: float, unit: str) -> str:
    """``"1,360 LLM tokens per conversation"`` (the unit of ``_cost_axis`` without its parenthesis)."""
    what = unit.split(" (")[0]
    return f"${value:,.4f} per conversation" if what.startswith("USD") else f"{value:,.0f} {what}"


def quality_vs_context_tokens(df: pd.DataFrame, metric: str, simulated: dict[str, bool], path: Path,
                              **resampling: Unpack[ResamplingOptions]) -> Path | None:
    """``metric@<B>tok`` (mean, 95% CI) against the context budget B: one line per memory pipeline.

    The equal-budget view (``lyra_lab.measures``, ``_budget``): every pipeline gets the same
    rendered-context tokens, so memories of long digests and of short turns are compared on
    the room they take.  One panel per recaller; memories whose lines coincide are one line,
    labelled as a group at its right end.  ``metric`` is a base name such as
    ``"answer_in_context"`` or ``"evidence_recall"``.
    """
    from matplotlib.transforms import offset_copy

    from lyra_lab.reports._frames import budget_frame

    rows = budget_frame(df)
    rows = rows[rows["metric_base"] == metric]
    if rows.empty:
        return None
    agg = aggregate(rows, by=["pipeline", "budget_tokens"], **resampling)
    agg["memory"], agg["facet"] = zip(*(split_pipeline(p) for p in agg["pipeline"]))
    short, shared = short_labels(sorted(agg["memory"].unique()))
    agg["short"] = agg["memory"].map(short)
    facets = sorted(agg["facet"].unique())
    budgets = sorted(int(b) for b in agg["budget_tokens"].unique())
    middle = budgets[(len(budgets) - 1) // 2]
    drawn, cut = [], False
    for facet in facets:
        part = agg[agg["facet"] == facet]
        lines = {label: line.set_index("budget_tokens").reindex(budgets) for label, line in part.groupby("short")}
        series = {label: [*line["mean"], *line["ci_low"], *line["ci_high"], *line["n"],
                          simulated.get(str(line["pipeline"].dropna().iloc[0]), False)]
                  for label, line in lines.items()}
        groups = group_identical(series, universe=list(short.values()))
        if len(groups) > MAX_LINES:  # more lines than a reader can follow: the best at the middle budget
            groups = sorted(groups, key=lambda g: -np.nan_to_num(lines[g.first].loc[middle, "mean"], nan=-1.0))
            groups, cut = groups[:MAX_LINES], True
        drawn.append((facet, lines, groups))
    colors = stable_colors(g.label for _, _, groups in drawn for g in groups)
    ylim = _limits(agg["ci_low"].fillna(agg["mean"]), agg["ci_high"].fillna(agg["mean"]))
    # one column, so each panel is wide and its labels have room; tall enough for its labels
    label_lines_needed = max(sum(wrap_label(g.label, 30).count("\n") + 1 for g in groups) for _, _, groups in drawn)
    fig, axes = panel_grid(len(facets), max(2.3, 0.16 * label_lines_needed + 0.5), ncols=1)
    pending = []
    for ax, (facet, lines, groups) in zip(axes.flat, drawn):
        labels = []
        for j, group in enumerate(groups):
            line, color = lines[group.first], colors[group.label]
            # lines sharing a budget are drawn a few points apart, so their markers and CIs stay apart
            shift = offset_copy(ax.transData, fig=fig, x=DODGE_PT * (j - (len(groups) - 1) / 2), units="points")
            xs = np.array(budgets, dtype=float)
            dashed = simulated.get(str(line["pipeline"].dropna().iloc[0]), False) and not all(simulated.values())
            means = line["mean"].to_numpy(float)
            ax.plot(xs, means, "--" if dashed else "-", color=color, lw=1.5, zorder=2, transform=shift)
            err = error_bars(means, line["ci_low"], line["ci_high"])
            if np.isfinite(err).any():
                ax.errorbar(xs, means, yerr=err, fmt="none", ecolor=color, elinewidth=1, capsize=2.5, alpha=0.8,
                            zorder=2, transform=shift)
            small = np.array([is_small(n) for n in line["n"]]) & np.isfinite(means)
            for mask, face in ((~small & np.isfinite(means), color), (small, "white")):  # hollow: a small n
                if mask.any():
                    ax.plot(xs[mask], means[mask], "o", ms=4.5, mfc=face, mec=color, color=color, ls="none",
                            zorder=3, transform=shift)
            last = line["mean"].last_valid_index()
            labels.append(LineLabel(xs[budgets.index(last)], line.loc[last, "mean"],
                                    f"{wrap_label(group.label, 30)} (n={int(line['n'].min())})", color))
        ax.set_xscale("log", base=2)
        ax.set_xticks(budgets, [str(b) for b in budgets])
        ax.minorticks_off()
        ax.set_xlim(budgets[0] / 1.3, budgets[-1] * 1.3)
        ax.set_ylim(*ylim)
        ax.set_title(f"recaller: {facet}" if facet else "memory systems (no recaller)", fontsize=10)
        ax.grid(alpha=0.3)
        pending.append((ax, labels))
    for ax in bottom_axes(axes):
        ax.set_xlabel("context budget B (rendered tokens, the same for every pipeline)")
    for ax in axes[:, 0]:
        ax.set_ylabel(f"{metric}@B\n(mean, 95% CI)")
    notes = [f"{n_phrase(agg['n'])}{small_note(agg['n'])}",
             "identical pipelines drawn once (×N; * = every value the run has)"
             + (f"; labels omit what all share: {shared}" if shared else "")
             + (f"; at most {MAX_LINES} lines a panel, the best at B = {middle} (all in metrics.csv)" if cut else "")]
    fig.suptitle(fit_text(f"{metric} at equal context tokens{simulated_note(simulated, agg['pipeline'], 'dashed')}\n"
                          + " · ".join(notes), FIGURE_WIDTH, 10), fontsize=10)
    for ax, labels in pending:
        label_lines(ax, labels)
    return save(fig, path)
