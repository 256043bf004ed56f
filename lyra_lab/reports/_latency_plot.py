"""``latency_boxes``: every latency phase of a run on one log axis, each measurement drawn once.

A phase timed per probe (recall, answer) is a measurement of a pipeline (memory × recaller).
A phase timed per conversation (summarize, rollup, embed, judge) is one measurement of the
replay; its rows are repeated under every recaller of that memory, so when the recallers of
a memory all carry the same values it is drawn once, on the memory's row.  Two panels: per
probe (a row per pipeline) and per conversation (a row per memory), a colour per phase, a box
where a row has at least ``MIN_BOX`` values, its dots otherwise.  Zero latencies (a phase that
did not run for that pipeline) cannot sit on a log axis; they are counted in the legend.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from lyra_lab.reports._figures import (
    FIGURE_WIDTH,
    new_figure,
    save,
    simulated_note,
    split_pipeline,
    without_recaller,
    wrap_label,
)
from lyra_lab.reports._legible import n_phrase, short_labels

if TYPE_CHECKING:
    from matplotlib.axes import Axes

PHASES = (  # (metric, name, unit of one value)
    ("recall_latency_s", "recall", "probe"),
    ("ingest.latency_s", "ingest", "conversation"),  # a memory system's ingest ([grid] systems)
    ("answer_latency_s", "answer", "probe"),
    ("summarize.latency_s", "summarize", "conversation"),
    ("rollup.latency_s", "rollup", "conversation"),
    ("embed.latency_s", "embed", "conversation"),
    ("judge.latency_s", "judge", "conversation"),
)
MIN_BOX = 5  # fewer values than this are drawn as dots: a box of one or two values suggests a spread
MAX_ROWS = 30  # more pipelines than this: per-probe phases are pooled per recaller (rows would be too thin to read)
_PHASE_COLORS = {"recall": "C0", "answer": "C1", "summarize": "C2", "rollup": "C3", "embed": "C4", "judge": "C5",
                 "ingest": "C6"}


@dataclass(frozen=True)
class Phase:
    """One phase's measurements: ``values`` (row, value) drawn on the ``level`` panel; ``zeros`` left out."""

    name: str
    unit: str  # what one value times: "probe" or "conversation"
    level: str  # the panel it is drawn on: "pipeline" or "memory"
    values: pd.DataFrame  # columns: row, value
    zeros: int


def phase_measurements(df: pd.DataFrame) -> list[Phase]:
    """The phases present with a non-zero value, each measurement once (see the module docstring)."""
    out = []
    for metric, name, unit in PHASES:
        part = df[(df["metric"] == metric) & df["value"].notna()]
        if part.empty or not (part["value"] > 0).any():
            continue
        level, rows = "pipeline", part.assign(row=part["pipeline"].astype(str))
        if unit == "conversation":
            keys = [c for c in ("conversation_id", "seed") if c in part.columns]
            memory = part.assign(row=[without_recaller(p) for p in part["pipeline"]])
            spread = memory.groupby(["row", *keys], dropna=False)["value"].nunique()
            if (spread <= 1).all():  # every recaller of a memory carries the same measurement
                level, rows = "memory", memory.drop_duplicates(["row", *keys])
        zeros = int((rows["value"] <= 0).sum())
        drawn = rows.loc[rows["value"] > 0, ["row", "value"]].reset_index(drop=True)
        out.append(Phase(name, unit, level, drawn, zeros))
    return out


def latency_boxes(df: pd.DataFrame, simulated: dict[str, bool], path: Path) -> Path | None:
    """The latency figure (see the module docstring), or None when no phase was timed."""
    from matplotlib.lines import Line2D

    phases = phase_measurements(df)
    if not phases:
        return None
    pooled = len({r for p in phases if p.level == "pipeline" for r in p.values["row"]}) > MAX_ROWS
    if pooled:  # one row per recaller, its memory pipelines' measurements together
        phases = [Phase(p.name, p.unit, p.level, p.values.assign(row=[split_pipeline(r)[1] for r in p.values["row"]]),
                        p.zeros) if p.level == "pipeline" else p for p in phases]
    levels = [lv for lv in ("pipeline", "memory") if any(p.level == lv for p in phases)]
    rows = {lv: sorted({r for p in phases if p.level == lv for r in p.values["row"]}) for lv in levels}
    tallest = max(len(r) for r in rows.values())
    fig = new_figure(figsize=(FIGURE_WIDTH, min(13.0, 0.3 * tallest + 2.0)), layout="constrained")
    ratios = [1.5, 1.0][:len(levels)] if len(levels) == 2 else [1.0]
    axes = fig.subplots(1, len(levels), squeeze=False, width_ratios=ratios)[0]
    handles = []
    for ax, level in zip(axes, levels):
        mine = [p for p in phases if p.level == level]
        names = rows[level]
        short, shared = short_labels(names)
        position = {r: len(names) - i for i, r in enumerate(names)}  # first row at the top
        step = 0.6 / len(mine)
        for k, phase in enumerate(mine):
            color = _PHASE_COLORS.get(phase.name, "C7")
            offset = (len(mine) - 1) / 2 * step - k * step
            counts = []
            for row, values in phase.values.groupby("row"):
                v = values["value"].to_numpy(float)
                y = position[str(row)] + offset
                counts.append(len(v))
                if len(v) >= MIN_BOX and np.ptp(v) > 0:  # a box of equal values would hide its own parts
                    ax.boxplot([v], positions=[y], orientation="horizontal", widths=step * 0.8, manage_ticks=False,
                               showfliers=True, boxprops={"color": color}, whiskerprops={"color": color},
                               capprops={"color": color}, medianprops={"color": color, "lw": 2},
                               flierprops={"marker": ".", "markeredgecolor": color, "markersize": 3})
                else:
                    ax.plot(v, np.full(len(v), y), "o", ms=3.5, color=color, mfc="white")
            zeros = f"; {phase.zeros} zero values not drawn" if phase.zeros else ""
            handles.append(Line2D([], [], color=color, marker="s", ls="",
                                  label=f"{phase.name} per {phase.unit} ({n_phrase(counts, 'values')}{zeros})"))
        ax.set_yticks([position[r] for r in names], [wrap_label(short[r], 34) for r in names], fontsize=7.5)
        ax.set_ylim(0.4, len(names) + 0.6)
        _decades(ax, pd.concat([p.values["value"] for p in mine]))
        ax.grid(axis="x", alpha=0.3)
        ax.set_xlabel("seconds (log scale)")
        what = ("a row per recaller, its memory pipelines pooled" if pooled else "a row per pipeline") \
            if level == "pipeline" else \
            "a row per memory (one measurement, shared by its recallers)"
        ax.set_title(what + (f"\nlabels omit what all share: {shared}" if shared else ""), fontsize=9)
    fig.legend(handles=handles, loc="outside lower center", ncols=min(2, len(handles)), fontsize=8, frameon=False)
    fig.suptitle(f"Latency by phase, each measurement drawn once (box: ≥ {MIN_BOX} values, else dots)"
                 f"{simulated_note(simulated, df['pipeline'].unique(), 'some pipelines')}", fontsize=10)
    return save(fig, path)


def _decades(ax: Axes, values: pd.Series) -> None:
    """A log x axis from the decade below the smallest value to the decade above the largest, decades labelled."""
    from matplotlib.ticker import LogLocator, NullFormatter

    low, high = np.floor(np.log10(values.min())), np.ceil(np.log10(values.max()))
    ax.set_xscale("log")
    ax.set_xlim(10 ** low, 10 ** max(high, low + 1))
    ax.xaxis.set_major_locator(LogLocator(base=10, numticks=12))
    ax.xaxis.set_minor_formatter(NullFormatter())
