"""``frontier.png``: the frontier section (``_frontier``) as a figure, one panel per cost axis.

The panels share the quality axis (the run's headline measure, mean and 95% CI, hollow when n is small),
so a pipeline sits at one height in every panel and is labelled once, beside the last panel
(``_legible.label_lines``).  On each panel the frontier's pipelines are diamonds joined by a black
staircase (what the best quality costs at most); dominated ones are circles when the dominance is shown
by a paired test (``_frontier_evidence``), squares when it holds on means only; a ceiling (``oracle``,
``full_context``) is a triangle.  Pipelines identical on every figure drawn are one point, labelled as a group.
"""

from __future__ import annotations

import math
from pathlib import Path

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes

from lyra_lab.reports._figures import FIGURE_WIDTH, fit_text, log_axis, new_figure, save, stable_colors, wrap_label
from lyra_lab.reports._frontier import AXES, FrontierSection, PipelineCosts
from lyra_lab.reports._legible import (
    LineLabel,
    SeriesGroup,
    group_identical,
    is_small,
    label_lines,
    n_phrase,
    short_labels,
    small_note,
    spread,
)

MAX_POINTS = 12  # pipelines a figure labels legibly beside one panel
DODGE_PT = 8.0  # points between pipelines closer than a marker in a panel: a marker's width
SHARE_SPAN = 0.3  # a quality in [0, 1] shows at least this much of it: zoomed on its values, never on noise
NEAR_Y = 0.03  # pipelines closer than this in height (axes fraction) share a row, spread DODGE_PT apart along x


def _staircase(points: list[tuple[float, float]]) -> tuple[list[float], list[float]]:
    """The frontier's step line through ``(cost, quality)`` points sorted by cost: flat until the next point."""
    xs: list[float] = []
    ys: list[float] = []
    for i, (x, y) in enumerate(sorted(points)):
        if i:
            xs.append(x)
            ys.append(ys[-1])
        xs.append(x)
        ys.append(y)
    return xs, ys


def _limits(ax: Axes, costs: list[float], ylim: tuple[float, float]) -> None:
    """The panel's limits (log x when every cost is positive and they span more than 20×), set before drawing."""
    ax.set_ylim(*ylim)
    costs = [c for c in costs if not math.isnan(c)]
    positive = [c for c in costs if c > 0]
    if positive and len(positive) == len(costs) and max(positive) / min(positive) > 20:
        ax.set_xlim(min(positive) / 1.5, max(positive) * 1.5)
        log_axis(ax.xaxis)
    else:
        span = (max(costs) - min(costs)) or (abs(max(costs)) or 1.0)
        ax.set_xlim(min(costs) - 0.08 * span, max(costs) + 0.08 * span)


def _quality_limits(low: float, high: float) -> tuple[float, float]:
    """The shared quality axis: a share (in [0, 1]) zoomed on its values, at least ``SHARE_SPAN`` of it shown.

    >>> [round(v, 3) for v in _quality_limits(0.0, 0.25)], [round(v, 3) for v in _quality_limits(1.0, 1.0)]
    ([-0.012, 0.312], [0.688, 1.012])
    """
    if low >= 0 and high <= 1:
        span = max(high - low, SHARE_SPAN)
        bottom = min(max(0.0, (low + high) / 2 - span / 2), 1.0 - span)
        return bottom - 0.04 * span, bottom + span + 0.04 * span
    pad = 0.08 * (high - low or 0.5)
    return low - pad, high + pad


def _offsets(ax: Axes, points: dict[str, tuple[float, float, float, float]]) -> dict[str, float]:
    """X offsets (points) that keep pipelines a marker apart in this panel, never one over another.

    ``points``: each pipeline's cost, quality and CI ends.  Pipelines whose heights (the marker and its
    error bar, ``NEAR_Y`` of margin, in axes fraction) overlap share a row; along each row the markers are
    spread (``_legible.spread``) at least ``DODGE_PT`` apart, each as near its true x as it can and
    within the panel, so no marker or error bar is drawn over another's or pushed out of view.
    """
    fig = ax.get_figure(root=True)
    assert fig is not None, "a panel on a figure"
    width_pt = ax.get_position().width * fig.get_figwidth() * 72
    to_fraction = ax.transScale + ax.transLimits  # data -> axes fraction, whatever the layout
    where, extent = {}, {}
    for k, (x, y, low, high) in points.items():
        where[k] = tuple(to_fraction.transform((x, y)))
        ends = [to_fraction.transform((x, v))[1] for v in (low, high) if not math.isnan(v)] + [where[k][1]]
        extent[k] = (min(ends) - NEAR_Y / 2, max(ends) + NEAR_Y / 2)
    rows: list[list[str]] = []
    top = -math.inf
    for k in sorted(where, key=lambda k: (extent[k][0], where[k][0], k)):
        if rows and extent[k][0] < top:
            rows[-1].append(k)
        else:
            rows.append([k])
            top = -math.inf
        top = max(top, extent[k][1])
    out = {}
    for row in rows:
        xs = [where[k][0] * width_pt for k in row]
        centres = spread(xs, [DODGE_PT] * len(row), 0.0, width_pt)  # inside the panel: a marker stays seen
        out.update({k: c - x for k, x, c in zip(row, xs, centres)})
    return out


def frontier_figure(section: FrontierSection, path: Path) -> Path | None:
    """Draw ``section`` into ``path`` (None when it has no cost axis to draw)."""
    from matplotlib.transforms import offset_copy

    if not section.axes:
        return None
    short, shared = short_labels([p.label for p in section.pipelines])
    series = {short[p.label]: [p.quality, p.low, p.high, p.n, p.ceiling, *(p.cost(a) for a in section.axes)]
              for p in section.pipelines}
    by_label = {short[p.label]: p for p in section.pipelines}
    groups = group_identical(series)
    cut = len(groups) > MAX_POINTS
    if cut:  # more than a reader can tell apart: every frontier pipeline and ceiling, then the best others
        def keep(g: SeriesGroup) -> tuple[bool, float]:
            p = by_label[g.first]
            on = p.ceiling or any(m.get(p.label) is not None and m[p.label].frontier for m in section.marks.values())
            return (not on, -p.quality)
        kept = set(g.label for g in sorted(groups, key=keep)[:MAX_POINTS])
        groups = [g for g in groups if g.label in kept]
    colors = stable_colors(g.label for g in groups)
    width_label = 30
    fig = new_figure(figsize=(FIGURE_WIDTH, 3.6 + 0.06 * len(groups)), layout="constrained")
    axes = fig.subplots(1, len(section.axes), sharey=True, squeeze=False)[0]
    qualities = [v for p in section.pipelines for v in (p.low, p.high, p.quality) if not math.isnan(v)]
    ylim = _quality_limits(min(qualities), max(qualities))
    placed: list[tuple[Axes, dict[str, tuple[float, float, float, float]], dict[str, list[Artist]]]] = []
    for ax, axis in zip(axes, section.axes):
        marks = section.marks.get(axis, {})
        front = []
        _limits(ax, [p.cost(axis) for p in section.pipelines], ylim)
        drawn = {g.label: (by_label[g.first].cost(axis), by_label[g.first].quality, by_label[g.first].low,
                           by_label[g.first].high) for g in groups
                 if not math.isnan(by_label[g.first].cost(axis))}
        placed.append((ax, drawn, {}))
        for group in groups:
            p: PipelineCosts = by_label[group.first]
            if group.label not in drawn:
                continue
            x = p.cost(axis)
            artists = placed[-1][2].setdefault(group.label, [])
            mark = marks.get(p.label)  # marks and the table use the whole label
            on = mark is not None and mark.frontier
            color = colors[group.label]
            if on:
                front.append((x, p.quality))
            err = np.array([[max(p.quality - p.low, 0.0)], [max(p.high - p.quality, 0.0)]])
            if not math.isnan(p.low) and float(err.sum()) > 1e-12:
                artists += ax.errorbar([x], [p.quality], yerr=err, fmt="none", ecolor=color, elinewidth=1,
                                       capsize=2.5, alpha=0.8, zorder=2).get_children()
            shown = mark is not None and bool(mark.shown_by)
            marker, size = ("^", 6.5) if p.ceiling else ("D", 8.0) if on else ("o", 5.5) if shown else ("s", 5.0)
            face = "white" if is_small(p.n) else color
            artists += ax.plot([x], [p.quality], marker, ms=size, mfc=face, mec=color, mew=2.0 if on else 1.2,
                               color=color, ls="none", zorder=3)
        if len(front) > 1:
            xs, ys = _staircase(front)
            ax.plot(xs, ys, "-", color="black", lw=0.8, alpha=0.6, zorder=1)
        ax.set_xlabel(next(n for a, n, _ in AXES if a == axis), fontsize=9)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=8)
    axes[0].set_ylabel(f"{section.metric}\n(mean, 95% CI)", fontsize=9)
    right = axes[-1].get_xlim()[1]  # labels join the panel's edge at their height: no leader across the points
    labels = [LineLabel(right, by_label[g.first].quality,
                        wrap_label(g.label + (" (ceiling)" if by_label[g.first].ceiling else ""), width_label),
                        colors[g.label])
              for g in groups if not math.isnan(by_label[g.first].cost(section.axes[-1]))]
    counts = [p.n for p in section.pipelines]
    dominated = [m[p.label] for m in section.marks.values() for p in section.pipelines
                 if not p.ceiling and m.get(p.label) is not None and m[p.label].dominated_by]
    kinds = ([", ● dominated (paired test)"] if any(d.shown_by for d in dominated) else []) + (
        [", ■ dominated on means only (not significant)"] if any(not d.shown_by for d in dominated) else [])
    notes = (f"{n_phrase(counts)}{small_note(counts)} · ◆ on the frontier (black line)" + "".join(kinds)
             + (", ▲ ceiling (not a contender)" if any(p.ceiling for p in section.pipelines) else "")
             + " · one label a pipeline, at its height in every panel; points closer than a marker drawn apart"
             + (f"; labels omit what all share: {shared}" if shared else "")
             + (f"; {MAX_POINTS} of {len(series)} pipelines drawn: the frontier's, the ceilings, then the best "
                "(all in the table)" if cut else ""))
    fig.suptitle(fit_text(f"{section.metric} against what a probe costs\n{notes}", FIGURE_WIDTH, 10),
                 fontsize=10)
    label_lines(axes[-1], labels)  # lays the figure out: the panels have their final size
    for ax, drawn, members in placed:  # pipelines closer than a marker, moved apart (in points, at the final size)
        for label, offset in _offsets(ax, drawn).items():
            if offset:
                for artist in members.get(label, []):
                    artist.set_transform(offset_copy(ax.transData, fig=fig, x=offset, units="points"))
    return save(fig, path)
