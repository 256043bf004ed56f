"""Figures of a sweep: throughput and latency (p50, p95) against load, and throughput against latency.

The third panel (``plot_tradeoff``) puts each level at its latency p90 (the
metric the SLO names first, else end to end) and its throughput, with the SLO
as a vertical line: levels left of it keep 90% of requests within the target.

Built on ``matplotlib.figure.Figure`` directly (no pyplot state), so they render headless
(Agg) in scripts and tests and display inline in notebooks.  They follow the report's
rules (``lyra_lab.reports``): each line is labelled at its right end instead of in a legend,
lines with the same values are drawn once and labelled together (a p95 equal to its p50,
two backends that measured the same), levels measured over fewer than ``SMALL_N`` requests
have hollow markers, and every panel says its n.  Simulated backends carry "(simulated)"
in their label.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, NamedTuple

import numpy as np
import pandas as pd

from lyra_lab.reports import LineLabel, group_identical, label_lines, n_phrase, small_marker, small_note

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure
    from matplotlib.text import Annotation
    from matplotlib.path import Path
    from matplotlib.transforms import Bbox

_XLABEL = {"closed": "concurrency (closed-loop workers)", "open": "offered rate (requests/s)"}


def _new_axes(ax: Axes | None) -> tuple[Figure | SubFigure, Axes]:
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.5, 4), layout="constrained")
    return fig, fig.add_subplot()


def _lines(summary: pd.DataFrame, mode: str):
    part = summary[summary["mode"] == mode]
    for label, group in part.groupby("label", sort=True):
        yield str(label), group.sort_values("level")


def _draw(ax: Axes, series: dict[str, pd.DataFrame], column: str, styles: dict[str, tuple[str, str]],
          colors: dict[str, Any]) -> list[LineLabel]:
    """One line per group of ``series`` with identical values of ``column``; returns their end labels."""
    values = {name: [*g["level"], *g[column]] for name, g in series.items()}
    labels = []
    for group in group_identical(values):
        g = series[group.first]
        color, style = colors[group.first], styles[group.first]
        name = " = ".join(group.members) if len(group.members) > 1 else group.first
        ax.plot(g["level"], g[column], linestyle=style[0], color=color, label=name, zorder=2)
        for small in (False, True):
            part = g[(g["requests"] < 10) == small]
            if len(part):
                ax.plot(part["level"], part[column], style[1], ms=5, ls="none", zorder=3,
                        **small_marker(9 if small else 10, color))
        last = g[column].last_valid_index()
        if last is not None:
            labels.append(LineLabel(g.loc[last, "level"], g.loc[last, column], name, color))
    return labels


def _throughput(ax: Axes, summary: pd.DataFrame, mode: str) -> list[LineLabel]:
    series = dict(_lines(summary, mode))
    colors = {name: f"C{i}" for i, name in enumerate(series)}
    labels = _draw(ax, series, "throughput_rps", {n: ("-", "o") for n in series}, colors)
    for name, g in series.items():
        for x, y, n in zip(g["level"], g["throughput_rps"], g["errors"]):
            if n:
                ax.annotate(f"{n} err", (x, y), textcoords="offset points", xytext=(-4, -13), ha="right",
                            fontsize=7.5, color=colors[name])  # left of the point: the last level's stays inside
    _finish(ax, mode, _Panel("Throughput", "throughput (ok requests/s)", "throughput_rps"), series)
    return labels


def _latency(ax: Axes, summary: pd.DataFrame, mode: str) -> list[LineLabel]:
    series: dict[str, pd.DataFrame] = {}
    styles: dict[str, tuple[str, str]] = {}
    colors: dict[str, Any] = {}
    for i, (label, g) in enumerate(_lines(summary, mode)):
        for q, style in (("p50", ("-", "o")), ("p95", ("--", "^"))):
            name = f"{label} {q}"
            series[name] = g.assign(latency=g[f"latency_{q}_s"])
            styles[name], colors[name] = style, f"C{i}"
    labels = _draw(ax, series, "latency", styles, colors)
    _finish(ax, mode, _Panel("Latency p50 (solid) and p95 (dashed)", "latency (s, end to end)", "latency"), series)
    return labels


def plot_throughput(summary: pd.DataFrame, ax: Axes | None = None, *, mode: str = "closed") -> Figure | SubFigure:
    """Successful requests/s against load; levels with failed requests are marked with their count.

    Returns:
        The ``Figure`` drawn on.
    """
    return _plot(summary, ax, mode, _throughput)


def plot_latency(summary: pd.DataFrame, ax: Axes | None = None, *, mode: str = "closed") -> Figure | SubFigure:
    """End-to-end latency p50 (solid) and p95 (dashed) against load.

    Returns:
        The ``Figure`` drawn on.
    """
    return _plot(summary, ax, mode, _latency)


def _plot(summary: pd.DataFrame, ax: Axes | None, mode: str,
          draw: Callable[[Axes, pd.DataFrame, str], list[LineLabel]]) -> Figure | SubFigure:
    """``draw`` one panel on ``ax`` (or a new figure) and label its lines at their ends."""
    fig, ax = _new_axes(ax)
    label_lines(ax, draw(ax, summary, mode))
    return fig


_METRIC_NAMES = {"ttft": "TTFT", "tpot": "TPOT", "e2el": "end-to-end latency"}


class _Level(NamedTuple):
    """One point of the trade-off panel: where it is drawn, its load level and its series' colour."""

    x: float
    y: float
    level: float
    color: str


class _Tradeoff(NamedTuple):
    """What the trade-off panel still has to write once the figure has its final size."""

    labels: list[LineLabel]
    levels: list[_Level]


def _tradeoff(ax: Axes, summary: pd.DataFrame, mode: str, slo: Mapping[str, float] | None) -> _Tradeoff:
    metric = next(iter(slo)) if slo else "e2el"
    column = f"{metric}_p90_s"
    labels = []
    levels: list[_Level] = []
    top_x = 0.0
    for i, (label, g) in enumerate(_lines(summary, mode)):
        g = g[g[column].notna()] if column in g else g.iloc[0:0]
        if metric != "e2el" and "streamed" in g:
            g = g[g["streamed"] > 0]  # TTFT and TPOT were not measured there (vLLM's 0 for an empty series)
        if not len(g):
            continue
        color = f"C{i}"
        ax.plot(g[column], g["throughput_rps"], "-", color=color, zorder=2)
        for small in (False, True):
            part = g[(g["requests"] < 10) == small]
            if len(part):
                ax.plot(part[column], part["throughput_rps"], "o", ms=5, ls="none", zorder=3,
                        **small_marker(9 if small else 10, color))
        levels += [_Level(x, y, level, color) for x, y, level in zip(g[column], g["throughput_rps"], g["level"])]
        labels.append(LineLabel(g[column].iloc[-1], g["throughput_rps"].iloc[-1], label, color))
        top_x = max(top_x, float(g[column].max()))
    name = _METRIC_NAMES[metric]
    if slo:
        target = slo[metric]
        ax.axvline(target, color="0.3", ls="--", lw=1, zorder=1)
        ax.annotate(f"SLO {metric} <= {target:g} s", (target, 1.0), xycoords=("data", "axes fraction"),
                    xytext=(-3, -10), textcoords="offset points", ha="right", fontsize=7.5, color="0.3")
        top_x = max(top_x, target)
    ax.set_xlim(0, top_x * 1.2 if top_x > 0 else 1.0)
    others = ", ".join(f"{k} <= {v:g} s" for k, v in (slo or {}).items() if k != metric)
    counts = summary.loc[summary["mode"] == mode, "requests"]
    ax.set_title(f"Throughput vs {name} p90" + (f" (SLO also {others})" if others else "")
                 + f"\n{n_phrase(counts, 'requests', each=False)} per level{small_note(counts)}", fontsize=9)
    ax.set_xlabel(f"{name} p90 (s)")
    ax.set_ylabel("throughput (ok requests/s)")
    top = float(summary.loc[summary["mode"] == mode, "throughput_rps"].max() or 0.0)
    ax.set_ylim(0, top * 1.15 if top > 0 else 1.0)
    ax.grid(alpha=0.3)
    return _Tradeoff(labels, levels)


_OFFSETS = ((0, 5, "center", "bottom"), (0, -5, "center", "top"), (5, 0, "left", "center"),
            (-5, 0, "right", "center"))  # above, below, right, left of the point, in points


def _write_levels(ax: Axes, levels: list[_Level], mode: str) -> None:
    """Name each point's level beside it where no other level's name is; points too close share one name.

    Run last, once every other text is in: the names are placed in pixels around their points,
    so a layout that still moved the axes would move the points apart from where the names were
    fitted (placed again, up to three times, until the layout holds).  A point drawn on (within
    3 pt of) one already named, or whose name fits nowhere around it, joins that name ("c=8, 16").
    """
    fig = ax.get_figure(root=True)
    assert fig is not None, "the trade-off panel needs an axes on a figure"
    if not levels:
        return
    for _ in range(3):
        fig.draw_without_rendering()
        where = ax.get_position().bounds
        placed = _place_levels(ax, levels, "c=" if mode == "closed" else "")
        fig.draw_without_rendering()
        if ax.get_position().bounds == where:
            return
        for named in placed:
            named.text.remove()
    _place_levels(ax, levels, "c=" if mode == "closed" else "")


def _place_levels(ax: Axes, levels: list[_Level], prefix: str) -> list[_Named]:
    fig = ax.get_figure(root=True)
    assert fig is not None
    placed: list[_Named] = []
    near = 3 * fig.dpi / 72  # 3 points, in pixels: closer than this, two points read as one
    # the drawn lines (series, SLO), in pixels: a name is not written across one where it fits elsewhere
    lines = [line.get_transform().transform_path(line.get_path()) for line in ax.get_lines()
             if line.get_visible() and line.get_linestyle() not in ("None", "none", "", " ")]
    for level in levels:
        name = f"{level.level:g}"
        at = ax.transData.transform((level.x, level.y))
        hit = next((p for p in placed if abs(p.at - at).max() < near), None)
        text = None
        if hit is None:
            text, hit = _free_place(ax, level, prefix + name, placed, lines)
        if text is not None:
            placed.append(_Named(text, at, [name], level))
        elif hit is not None:
            hit.levels.append(name)
            hit.text.set_text(prefix + ", ".join(hit.levels))
            _clear_joined(ax, hit, placed, lines)
    return placed


def _clear_joined(ax: Axes, named: _Named, placed: list[_Named], lines: list[Path]) -> None:
    """A name that grew by a joined level and now runs into another name is written again where it fits."""
    box = named.text.get_window_extent()
    others = [p for p in placed if p is not named]
    if _inside(box, ax.get_window_extent()) and not any(box.overlaps(p.text.get_window_extent()) for p in others):
        return
    label = named.text.get_text()
    named.text.remove()
    text, _ = _free_place(ax, named.point, label, others, lines)
    if text is None:  # nowhere clear: the name goes back where it was (the figure check will say so)
        text = ax.annotate(label, (named.point.x, named.point.y), textcoords="offset points", xytext=(0, 5),
                           ha="center", va="bottom", fontsize=7, color=named.point.color)
    placed[placed.index(named)] = named._replace(text=text)


def _inside(box: Bbox, panel: Bbox) -> bool:
    return panel.x0 <= box.x0 and box.x1 <= panel.x1 and panel.y0 <= box.y0 and box.y1 <= panel.y1


def _free_place(ax: Axes, level: _Level, label: str, placed: list[_Named],
                lines: list[Path]) -> tuple[Annotation | None, _Named | None]:
    """``label`` written beside its point clear of other names, and of the lines where it can be.

    A name clears a line by 2 points (a box that stops short of a line by less reads as written on
    it: a glyph's ink can reach past its box). Returns the text, or (None, the name in the way of the
    last place tried) when no place is clear.
    """
    fig = ax.get_figure(root=True)
    assert fig is not None
    clearance = 2 * fig.dpi / 72  # 2 points, in pixels
    panel = ax.get_window_extent()  # a name outside the panel runs into the tick labels
    hit = None
    for clear_of_lines in (True, False):
        for dx, dy, ha, va in _OFFSETS:
            text = ax.annotate(label, (level.x, level.y), textcoords="offset points", xytext=(dx, dy),
                               ha=ha, va=va, fontsize=7, color=level.color)
            box = text.get_window_extent()  # measured with the figure's own renderer
            hit = next((p for p in placed if box.overlaps(p.text.get_window_extent())), None)
            inside = _inside(box, panel)
            crosses = clear_of_lines and any(path.intersects_bbox(box.padded(clearance), filled=False)
                                             for path in lines)
            if hit is None and inside and not crosses:
                return text, None
            text.remove()
    return None, hit


class _Named(NamedTuple):
    """A level name written on the trade-off panel and the levels it names."""

    text: Annotation
    at: np.ndarray  # the point named, in pixels
    levels: list[str]
    point: _Level  # the first level named here: where the name is placed again when it grows


def plot_tradeoff(summary: pd.DataFrame, ax: Axes | None = None, *, mode: str = "closed",
                  slo: Mapping[str, float] | None = None) -> Figure | SubFigure:
    """Throughput against latency p90, one point per level, the SLO (``{"ttft": 0.5}``…) as a vertical line.

    The x axis is the p90 of the metric ``slo`` names first (end-to-end latency
    without an SLO); levels where it was not measured (TTFT and TPOT of unstreamed requests) are left out.

    Returns:
        The ``Figure`` drawn on.
    """
    fig, ax = _new_axes(ax)
    drawn = _tradeoff(ax, summary, mode, slo)
    label_lines(ax, drawn.labels)
    _write_levels(ax, drawn.levels, mode)
    return fig


def plot_sweep(summary: pd.DataFrame, slo: Mapping[str, float] | None = None) -> Figure:
    """Throughput, latency and throughput against latency (with ``slo``'s line), one row per load mode.

    Raises:
        ValueError: an empty summary.
    """
    from matplotlib.figure import Figure

    modes = [m for m in ("closed", "open") if (summary["mode"] == m).any()]
    if not modes:
        raise ValueError("nothing to plot: the summary has no levels")
    fig = Figure(figsize=(15, 3.8 * len(modes) + 0.4), layout="constrained")
    axes = fig.subplots(len(modes), 3, squeeze=False)
    pending, levels = [], []
    for row, mode in zip(axes, modes):
        drawn = _tradeoff(row[2], summary, mode, slo)
        pending += [(row[0], _throughput(row[0], summary, mode)), (row[1], _latency(row[1], summary, mode)),
                    (row[2], drawn.labels)]
        levels.append((row[2], drawn.levels, mode))
    for ax, labels in pending:  # last: the axes have their final size once every other text is in
        label_lines(ax, labels)
    for ax, marks, mode in levels:
        _write_levels(ax, marks, mode)
    return fig


class _Panel(NamedTuple):
    """What one panel shows: its title, its y axis label and the ``series`` column it plots."""

    title: str
    ylabel: str
    column: str


def _finish(ax: Axes, mode: str, panel: _Panel, series: dict[str, pd.DataFrame]) -> None:
    title, column = panel.title, panel.column
    ax.set_xlabel(_XLABEL.get(mode, "level"))
    ax.set_ylabel(panel.ylabel)
    counts = pd.concat([g["requests"] for g in series.values()]) if series else pd.Series(dtype=float)
    ax.set_title(f"{title} vs {'concurrency' if mode == 'closed' else 'offered rate'}\n"
                 f"{n_phrase(counts, 'requests', each=False)} per level{small_note(counts)}", fontsize=9)
    if mode == "closed":
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter("{x:g}")
        ax.minorticks_off()
    top = max([float(g[column].max()) for g in series.values() if g[column].notna().any()] + [0.0])
    ax.set_ylim(0, top * 1.15 if top > 0 else 1.0)
    ax.grid(alpha=0.3)
