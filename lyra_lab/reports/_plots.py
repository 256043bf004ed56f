"""The report's PNG plots: quality vs cost, quality vs context tokens, latency, per category.

Figures are ``matplotlib.figure.Figure`` objects drawn on their own Agg canvas,
never through ``pyplot``: writing a report must not switch the caller's backend
or touch rcParams (a notebook's later ``plt.show()`` must still work).

Readability choices: pipeline names are long (``token_budget+map_reduce+none|dense``),
so they go in legends outside the axes or on the y axis of horizontal plots,
wrapped at ``+``/``|``, never as rotated x labels that collide.  Results from
the simulated server are drawn hollow and labelled "(simulated)".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from lyra_lab.stats import aggregate

_PHASES = (  # (metric, axis label)
    ("recall_latency_s", "recall, per probe (s)"),
    ("ingest.latency_s", "ingest of a memory system, per conversation (s)"),
    ("answer_latency_s", "answer, per probe (s)"),
    ("summarize.latency_s", "summarize, per conversation (s)"),
    ("rollup.latency_s", "rollup, per conversation (s)"),
    ("embed.latency_s", "embed, per conversation (s)"),
    ("judge.latency_s", "judge, per conversation (s)"),
)


def new_figure(**kwargs):
    """A standalone figure (no pyplot, no global backend switch); ``_save`` writes it."""
    from matplotlib.figure import Figure

    return Figure(**kwargs)


def _subplots(**kwargs):
    fig_kw = {k: kwargs.pop(k) for k in ("figsize", "layout") if k in kwargs}
    fig = new_figure(**fig_kw)
    return fig, fig.subplots(**kwargs)


def _panels(n: int, panel_w: float, panel_h: float, extra_w: float, extra_h: float = 0.0, sharex: bool = True):
    """A figure of ``n`` panels, at most 3 a row (panels left over hidden): ``(fig, axes)`` with ``axes.flat``."""
    ncols = min(3, n)
    nrows = -(-n // ncols)
    fig, axes = _subplots(nrows=nrows, ncols=ncols, figsize=(panel_w * ncols + extra_w, panel_h * nrows + extra_h),
                          sharex=sharex, sharey=True, squeeze=False, layout="constrained")
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, axes


def wrap_label(label: str, width: int = 28) -> str:
    """Break a pipeline label after ``+``/``|`` so no line exceeds ~``width`` characters."""
    parts = re.split(r"(?<=[+|])", str(label))
    lines, line = [], ""
    for part in parts:
        if line and len(line) + len(part) > width:
            lines.append(line)
            line = ""
        line += part
    return "\n".join(lines + [line])


def _colors(n: int):
    """Distinct colours for ``n`` series (tab10, then tab20, then a continuous map)."""
    from matplotlib import colormaps

    if n <= 10:
        return [colormaps["tab10"](i) for i in range(10)]
    if n <= 20:
        return [colormaps["tab20"](i) for i in range(20)]
    return [colormaps["turbo"](i / max(1, n - 1)) for i in range(n)]


def _display(pipelines: Sequence[str], simulated: dict[str, bool]) -> dict[str, str]:
    return {p: wrap_label(p) + ("\n(simulated)" if simulated.get(p) else "") for p in pipelines}


def split_pipeline(label: str) -> tuple[str, str]:
    """``"memory|recaller[|backend=x]"`` → ``("memory", "recaller[|backend=x]")`` (facet key second)."""
    memory, _, rest = str(label).partition("|")
    return memory, rest


def _cost_axis(df: pd.DataFrame) -> tuple[pd.Series, str]:
    """Memory-building cost per pipeline (dollars, else tokens, else context tokens) and its axis label."""
    conv = df[df["metric"].isin(["summarize.cost_usd", "rollup.cost_usd"])]
    unit = "USD per conversation (summarize + rollup)"
    if conv.empty or conv["value"].abs().sum() == 0:
        conv = df[df["metric"].str.match(r"^(summarize|rollup)\.(prompt|completion)_tokens$")]
        unit = "tokens per conversation (summarize + rollup)"
    if conv.empty or conv["value"].abs().sum() == 0:
        conv, unit = df[df["metric"] == "context_tokens"], "context tokens per probe"
    if "conversation_id" in conv.columns and unit != "context tokens per probe":
        # sum the phases of one replay (conversation × seed), then average over replays
        replay = ["pipeline", "conversation_id"] + (["seed"] if "seed" in conv.columns else [])
        return conv.groupby(replay, dropna=False)["value"].sum().groupby("pipeline").mean(), unit
    return conv.groupby("pipeline")["value"].mean(), unit


def quality_vs_cost(df: pd.DataFrame, metric: str, simulated: dict[str, bool], path: Path) -> Path | None:
    """``metric`` (mean, 95% CI bars) against memory-building cost: one panel per recaller.

    Points sit at their true x (never jittered: a data axis shows data).  Each
    point is labelled directly with its memory pipeline; pipelines with the same
    result in a panel share one point and one label, so nothing hides behind
    another and no colour has to be matched to a legend.
    """
    quality = aggregate(df[df["metric"] == metric], by=["pipeline"])
    if quality.empty:
        return None
    x, unit = _cost_axis(df)
    quality["x"] = [float(x.get(p, 0.0)) for p in quality["pipeline"]]
    quality["memory"], quality["facet"] = zip(*(split_pipeline(p) for p in quality["pipeline"]))
    facets = sorted(quality["facet"].unique())
    fig, axes = _panels(len(facets), 5.2, 4.2, 1.0, 0.6)
    for ax, facet in zip(axes.flat, facets):
        part = quality[quality["facet"] == facet]
        points = part.groupby(["x", "mean", "ci_low", "ci_high"], sort=True)
        for j, ((xv, mean, low, high), same) in enumerate(points):
            hollow = all(simulated.get(p, False) for p in same["pipeline"])
            ax.errorbar([xv], [mean], yerr=[[mean - low], [high - mean]], fmt="o", ms=7, capsize=3,
                        color="C0", mfc="white" if hollow else "C0")
            names = [m + (" (sim.)" if simulated.get(p) else "") for m, p in zip(same["memory"], same["pipeline"])]
            n = same["n"].iloc[0]
            text = "\n".join(wrap_label(name, 34) for name in names) + f"\nn={n}"
            ax.annotate(text, (xv, mean), xytext=(7, 10 if j % 2 else -10), textcoords="offset points",
                        fontsize=6.5, va="center", ha="left")
        ax.set_title(f"recaller: {facet}" if facet else "memory systems (no recaller)", fontsize=10)
        ax.grid(alpha=0.3)
        ax.margins(x=0.25, y=0.12)
    for ax in axes[-1]:
        ax.set_xlabel(unit)
    for ax in axes[:, 0]:
        ax.set_ylabel(f"{metric} (mean, 95% CI)")
    hollow_note = "; hollow markers are simulated" if any(simulated.values()) else ""
    fig.suptitle(f"Quality vs cost: {metric} — points labelled by memory pipeline, n = probes{hollow_note}")
    return _save(fig, path)


def quality_vs_context_tokens(df: pd.DataFrame, metric: str, simulated: dict[str, bool], path: Path,
                              n_resamples: int = 1000, seed: int = 0) -> Path | None:
    """``metric@<B>tok`` (mean, 95% CI band) against the context budget B: one line per memory pipeline.

    The equal-budget view (``lyra_lab.measures``, ``_budget``): every pipeline gets the same
    rendered-context tokens, so memories of long digests and of short turns are
    compared on the room they take.  One panel per recaller, one colour per
    memory pipeline across panels; the shared legend gives the probes behind
    each memory's lines (``n``, the smallest over its budgets and recallers).
    ``metric`` is a base name such as ``"answer_in_context"`` or ``"evidence_recall"``.
    """
    from lyra_lab.reports._frames import budget_frame

    rows = budget_frame(df)
    rows = rows[rows["metric_base"] == metric]
    if rows.empty:
        return None
    agg = aggregate(rows, by=["pipeline", "budget_tokens"], n_resamples=n_resamples, seed=seed)
    agg["memory"], agg["facet"] = zip(*(split_pipeline(p) for p in agg["pipeline"]))
    facets = sorted(agg["facet"].unique())
    memories = sorted(agg["memory"].unique())
    colors = dict(zip(memories, _colors(len(memories))))
    fig, axes = _panels(len(facets), 5.4, 4.4, 1.0, 0.6)
    for ax, facet in zip(axes.flat, facets):
        for (pipeline, memory), line in agg[agg["facet"] == facet].groupby(["pipeline", "memory"]):
            line = line.sort_values("budget_tokens")
            style = "--" if simulated.get(pipeline) else "-"
            ax.plot(line["budget_tokens"], line["mean"], style, marker="o", ms=4, color=colors[memory])
            ax.fill_between(line["budget_tokens"], line["ci_low"], line["ci_high"], color=colors[memory], alpha=0.15,
                            linewidth=0)
        ax.set_xscale("log", base=2)
        budgets = sorted(agg["budget_tokens"].unique())
        ax.set_xticks(budgets, [str(b) for b in budgets])
        ax.set_title(f"recaller: {facet}" if facet else "memory systems (no recaller)", fontsize=10)
        ax.grid(alpha=0.3)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=colors[m], marker="o", ms=4,
                      label=wrap_label(m, 34) + f" n={int(agg.loc[agg['memory'] == m, 'n'].min())}")
               for m in memories]
    fig.legend(handles=handles, loc="outside right upper", fontsize=7, frameon=False, title="memory pipeline")
    for ax in axes[-1]:
        ax.set_xlabel("context budget B (rendered tokens, same for every pipeline)")
    for ax in axes[:, 0]:
        ax.set_ylabel(f"{metric}@B (mean, 95% CI band)")
    total = agg["n"].max()
    fig.suptitle(f"{metric} at equal context tokens — lines per memory pipeline, n = probes (up to {total})"
                 + ("; dashed lines are simulated" if any(simulated.values()) else ""))
    return _save(fig, path)


MIN_BOX = 5  # fewer values than this are drawn as dots: a box of one or two values suggests a spread


def latency_boxes(df: pd.DataFrame, simulated: dict[str, bool], path: Path) -> Path | None:
    """One panel per phase, one row per pipeline: a box where there are >= 5 values, dots otherwise.

    ``<phase>.latency_s`` is the sum of per-call latencies as measured when the
    calls were paid, so calls served from the response cache are not drawn as 0 s.
    """
    # a phase that never ran (all zero, e.g. rollup "none") would only add an empty panel
    phases = [(m, label) for m, label in _PHASES if df.loc[df["metric"] == m, "value"].fillna(0).abs().sum() > 0]
    if not phases:
        return None
    pipelines = sorted(df["pipeline"].unique())
    labels = _display(pipelines, simulated)
    fig, axes = _panels(len(phases), 4.2, max(3.0, 0.55 * len(pipelines) + 1.5), 2.5, sharex=False)
    for ax, (metric, label) in zip(axes.flat, phases):
        part = df[df["metric"] == metric]
        for i, p in enumerate(pipelines, start=1):
            values = part.loc[part["pipeline"] == p, "value"].dropna().to_numpy(float)
            if len(values) >= MIN_BOX:
                ax.boxplot([values], positions=[i], orientation="horizontal", widths=0.6, manage_ticks=False)
            elif len(values):
                ax.plot(values, np.full(len(values), float(i)), "o", color="C0",
                        mfc="white" if simulated.get(p) else "C0")
            ax.text(0.99, i + 0.3, f"n={len(values)}", transform=ax.get_yaxis_transform(), fontsize=7,
                    ha="right", va="center", color="0.35")
        ax.set_yticks(range(1, len(pipelines) + 1), [labels[p] for p in pipelines], fontsize=8)
        ax.set_ylim(0.4, len(pipelines) + 0.6)
        ax.set_xlabel(label)
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle("Latency by phase and pipeline (boxes where n >= 5, else each value)"
                 + (" — some simulated" if any(simulated.values()) else ""))
    return _save(fig, path)


MAX_BAR_PIPELINES = 8  # past this, grouped bars turn into a wall of colours: a heatmap reads better


def category_matrix(agg: pd.DataFrame, category_col: str, column: str = "mean") -> pd.DataFrame:
    """Pipelines (rows) × categories (columns) of one column of an ``aggregate`` frame."""
    table = agg.assign(_category=agg[category_col].astype(str)).pivot(
        index="pipeline", columns="_category", values=column)
    table.columns.name = None
    return table.sort_index().reindex(sorted(table.columns), axis=1)


def category_heatmap(agg: pd.DataFrame, metric: str, category_col: str, simulated: dict[str, bool],
                     path: Path) -> Path:
    """Heatmap of ``metric`` per pipeline (rows) and category (columns); cells show mean [95% CI] and n."""
    means = category_matrix(agg, category_col)
    low, high, n = (category_matrix(agg, category_col, c) for c in ("ci_low", "ci_high", "n"))
    fig, ax = _subplots(figsize=(3.0 + 1.9 * means.shape[1], 1.2 + 0.42 * means.shape[0]))
    image = ax.imshow(means.to_numpy(dtype=float), cmap="viridis", aspect="auto",
                      vmin=min(0.0, float(np.nanmin(means.to_numpy(dtype=float)))),
                      vmax=max(1.0, float(np.nanmax(means.to_numpy(dtype=float)))))
    for i, pipeline in enumerate(means.index):
        for j, category in enumerate(means.columns):
            value = means.iat[i, j]
            if pd.isna(value):
                continue
            text = f"{value:.2f} [{low.iat[i, j]:.2f}, {high.iat[i, j]:.2f}] n={int(n.iat[i, j])}"
            ax.text(j, i, text, ha="center", va="center", fontsize=7,
                    color="black" if value > 0.6 else "white")
    ax.set_xticks(range(means.shape[1]), list(means.columns))
    ax.set_yticks(range(means.shape[0]),
                  [p + (" (simulated)" if simulated.get(p) else "") for p in means.index], fontsize=8)
    ax.set_xlabel("probe category")
    ax.set_title(f"{metric} by probe category (mean [95% CI])")
    fig.colorbar(image, ax=ax, label=metric, fraction=0.04)
    return _save(fig, path)


def category_bars(df: pd.DataFrame, metric: str, category_col: str, simulated: dict[str, bool],
                  path: Path) -> Path | None:
    """Grouped bars: ``metric`` per category (x) and pipeline (colour), with 95% CI error bars and n."""
    part = df[(df["metric"] == metric) & (df[category_col].astype(str) != "")]
    if part.empty:
        return None
    agg = aggregate(part, by=["pipeline", category_col])
    categories = sorted(agg[category_col].astype(str).unique())
    pipelines = sorted(agg["pipeline"].unique())
    if len(pipelines) > MAX_BAR_PIPELINES:
        return category_heatmap(agg, metric, category_col, simulated, path)
    labels = _display(pipelines, simulated)
    fig, ax = _subplots(figsize=(max(7.0, 1.3 * len(categories) * max(1, len(pipelines)) ** 0.5 + 4), 5))
    width = 0.8 / len(pipelines)
    colors = _colors(len(pipelines))
    for j, pipeline in enumerate(pipelines):
        mine = agg[agg["pipeline"] == pipeline]
        rows = mine.set_index(mine[category_col].astype(str)).reindex(categories)
        xs = np.arange(len(categories)) - 0.4 + width * (j + 0.5)
        err = np.vstack([rows["mean"] - rows["ci_low"], rows["ci_high"] - rows["mean"]]).clip(min=0)
        ax.bar(xs, rows["mean"], width, yerr=np.nan_to_num(err), capsize=3, label=labels[pipeline],
               color=colors[j % len(colors)],
               hatch="//" if simulated.get(pipeline) else None)
        for x, n in zip(xs, rows["n"]):
            if pd.notna(n):
                ax.text(x + width * 0.22, 0.01, f"n={int(n)}", transform=ax.get_xaxis_transform(), rotation=90,
                        ha="center", va="bottom", fontsize=6, color="0.2")
    ax.set_xticks(range(len(categories)), categories)
    ax.set_xlabel("probe category")
    ax.set_ylabel(f"{metric} (mean, 95% CI)")
    ax.set_title(f"{metric} by probe category")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, title="pipeline", frameon=False)
    return _save(fig, path)


def _save(fig, path: Path) -> Path:
    fig.savefig(path, dpi=110, bbox_inches="tight")  # "tight" keeps outside legends in the file
    return path
