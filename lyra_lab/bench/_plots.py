"""Figures of a sweep: throughput and latency (p50, p95) against load, one line per backend.

Built on ``matplotlib.figure.Figure`` directly (no pyplot state), so they render headless
(Agg) in scripts and tests and display inline in notebooks.  They follow the report's
rules (``lyra_lab.reports``): each line is labelled at its right end instead of in a legend,
lines with the same values are drawn once and labelled together (a p95 equal to its p50,
two backends that measured the same), levels measured over fewer than ``SMALL_N`` requests
have hollow markers, and every panel says its n.  Simulated backends carry "(simulated)"
in their label.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from lyra_lab.reports import LineLabel, group_identical, label_lines, n_phrase, small_marker, small_note

_XLABEL = {"closed": "concurrency (closed-loop workers)", "open": "offered rate (requests/s)"}


def _new_axes(ax: Any) -> tuple[Any, Any]:
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.5, 4), layout="constrained")
    return fig, fig.add_subplot()


def _lines(summary: pd.DataFrame, mode: str):
    part = summary[summary["mode"] == mode]
    for label, group in part.groupby("label", sort=True):
        yield str(label), group.sort_values("level")


def _draw(ax: Any, series: dict[str, pd.DataFrame], column: str, styles: dict[str, tuple[str, str]],
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


def _throughput(ax: Any, summary: pd.DataFrame, mode: str) -> list[LineLabel]:
    series = dict(_lines(summary, mode))
    colors = {name: f"C{i}" for i, name in enumerate(series)}
    labels = _draw(ax, series, "throughput_rps", {n: ("-", "o") for n in series}, colors)
    for name, g in series.items():
        for x, y, n in zip(g["level"], g["throughput_rps"], g["errors"]):
            if n:
                ax.annotate(f"{n} err", (x, y), textcoords="offset points", xytext=(-4, -13), ha="right",
                            fontsize=7.5, color=colors[name])  # left of the point: the last level's stays inside
    _finish(ax, mode, "throughput (ok requests/s)", "Throughput", series, "throughput_rps")
    return labels


def _latency(ax: Any, summary: pd.DataFrame, mode: str) -> list[LineLabel]:
    series: dict[str, pd.DataFrame] = {}
    styles: dict[str, tuple[str, str]] = {}
    colors: dict[str, Any] = {}
    for i, (label, g) in enumerate(_lines(summary, mode)):
        for q, style in (("p50", ("-", "o")), ("p95", ("--", "^"))):
            name = f"{label} {q}"
            series[name] = g.assign(latency=g[f"latency_{q}_s"])
            styles[name], colors[name] = style, f"C{i}"
    labels = _draw(ax, series, "latency", styles, colors)
    _finish(ax, mode, "latency (s, end to end)", "Latency p50 (solid) and p95 (dashed)", series, "latency")
    return labels


def plot_throughput(summary: pd.DataFrame, ax: Any = None, *, mode: str = "closed") -> Any:
    """Successful requests/s against load; levels with failed requests are marked with their count.

    Returns:
        The ``Figure`` drawn on.
    """
    fig, ax = _new_axes(ax)
    label_lines(ax, _throughput(ax, summary, mode))
    return fig


def plot_latency(summary: pd.DataFrame, ax: Any = None, *, mode: str = "closed") -> Any:
    """End-to-end latency p50 (solid) and p95 (dashed) against load.

    Returns:
        The ``Figure`` drawn on.
    """
    fig, ax = _new_axes(ax)
    label_lines(ax, _latency(ax, summary, mode))
    return fig


def plot_sweep(summary: pd.DataFrame) -> Any:
    """Throughput and latency side by side, one row per load mode present in ``summary``.

    Raises:
        ValueError: an empty summary.
    """
    from matplotlib.figure import Figure

    modes = [m for m in ("closed", "open") if (summary["mode"] == m).any()]
    if not modes:
        raise ValueError("nothing to plot: the summary has no levels")
    fig = Figure(figsize=(10, 3.6 * len(modes) + 0.4), layout="constrained")
    axes = fig.subplots(len(modes), 2, squeeze=False)
    pending = []
    for row, mode in zip(axes, modes):
        pending += [(row[0], _throughput(row[0], summary, mode)), (row[1], _latency(row[1], summary, mode))]
    for ax, labels in pending:  # last: the axes have their final size once every other text is in
        label_lines(ax, labels)
    return fig


def _finish(ax: Any, mode: str, ylabel: str, title: str, series: dict[str, pd.DataFrame], column: str) -> None:
    ax.set_xlabel(_XLABEL.get(mode, "level"))
    ax.set_ylabel(ylabel)
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
