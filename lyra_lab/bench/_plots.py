"""Figures of a sweep: throughput and latency (p50, p95) against load, one line per backend.

Built on ``matplotlib.figure.Figure`` directly (no pyplot state), so they
render headless (Agg) in scripts and tests and display inline in notebooks.
Simulated backends carry "(simulated)" in their label, hence in the legend.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

_XLABEL = {"closed": "concurrency (closed-loop workers)", "open": "offered rate (requests/s)"}


def _new_axes(ax: Any) -> tuple[Any, Any]:
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4), layout="constrained")
    return fig, fig.add_subplot()


def _lines(summary: pd.DataFrame, mode: str):
    part = summary[summary["mode"] == mode]
    for label, group in part.groupby("label", sort=True):
        yield label, group.sort_values("level")


def plot_throughput(summary: pd.DataFrame, ax: Any = None, *, mode: str = "closed") -> Any:
    """Successful requests/s against load; levels with failed requests are marked with their count.

    Returns:
        The ``Figure`` drawn on.
    """
    fig, ax = _new_axes(ax)
    for label, g in _lines(summary, mode):
        (line,) = ax.plot(g["level"], g["throughput_rps"], marker="o", label=label)
        for x, y, n in zip(g["level"], g["throughput_rps"], g["errors"]):
            if n:
                ax.annotate(f"{n} err", (x, y), textcoords="offset points", xytext=(4, -12),
                            fontsize=8, color=line.get_color())
    _finish(ax, mode, "throughput (ok requests/s)", "Throughput")
    return fig


def plot_latency(summary: pd.DataFrame, ax: Any = None, *, mode: str = "closed") -> Any:
    """End-to-end latency p50 (solid) and p95 (dashed) against load.

    Returns:
        The ``Figure`` drawn on.
    """
    fig, ax = _new_axes(ax)
    for label, g in _lines(summary, mode):
        (line,) = ax.plot(g["level"], g["latency_p50_s"], marker="o", label=f"{label} p50")
        ax.plot(g["level"], g["latency_p95_s"], marker="^", linestyle="--", color=line.get_color(),
                label=f"{label} p95")
    _finish(ax, mode, "latency (s, end to end)", "Latency")
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
    fig = Figure(figsize=(11, 4 * len(modes)), layout="constrained")
    axes = fig.subplots(len(modes), 2, squeeze=False)
    for row, mode in zip(axes, modes):
        plot_throughput(summary, row[0], mode=mode)
        plot_latency(summary, row[1], mode=mode)
    return fig


def _finish(ax: Any, mode: str, ylabel: str, title: str) -> None:
    ax.set_xlabel(_XLABEL.get(mode, "level"))
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title} vs {'concurrency' if mode == 'closed' else 'offered rate'}")
    if mode == "closed":
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter("{x:g}")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
