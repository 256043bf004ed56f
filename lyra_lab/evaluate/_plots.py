"""The report's PNG plots (matplotlib, Agg backend): quality vs cost, latency, per category.

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

from lyra_lab.evaluate._bootstrap import aggregate

_PHASES = (  # (metric, axis label)
    ("recall_latency_s", "recall, per probe (s)"),
    ("answer_latency_s", "answer, per probe (s)"),
    ("summarize.latency_s", "summarize, per conversation (s)"),
    ("rollup.latency_s", "rollup, per conversation (s)"),
    ("embed.latency_s", "embed, per conversation (s)"),
)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)  # files only; never open a window
    import matplotlib.pyplot as plt

    return plt


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


def _colors(plt, n: int):
    """Distinct colours for ``n`` series (tab10, then tab20, then a continuous map)."""
    if n <= 10:
        return [plt.cm.tab10(i) for i in range(10)]
    if n <= 20:
        return [plt.cm.tab20(i) for i in range(20)]
    return [plt.cm.turbo(i / max(1, n - 1)) for i in range(n)]


def _dodge(xs: list[float]) -> list[float]:
    """Spread points that share an x value a little apart so none hides another."""
    span = (max(xs) - min(xs)) or max(abs(max(xs)), 1.0)
    step = 0.012 * span
    out, seen = [], {}
    for x in xs:
        twins = [v for v in xs if abs(v - x) <= 1e-12 * (1 + abs(x))]
        i = seen.get(x, 0)
        seen[x] = i + 1
        out.append(x + (i - (len(twins) - 1) / 2) * step)
    return out


def _display(pipelines: Sequence[str], simulated: dict[str, bool]) -> dict[str, str]:
    return {p: wrap_label(p) + ("\n(simulated)" if simulated.get(p) else "") for p in pipelines}


def quality_vs_cost(df: pd.DataFrame, metric: str, simulated: dict[str, bool], path: Path) -> Path | None:
    """One point per pipeline: ``metric`` (mean, 95% CI bars) against memory-building cost."""
    quality = aggregate(df[df["metric"] == metric], by=["pipeline"])
    if quality.empty:
        return None
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
        x = conv.groupby(replay, dropna=False)["value"].sum().groupby("pipeline").mean()
    else:
        x = conv.groupby("pipeline")["value"].mean()
    plt = _pyplot()
    labels = _display(quality["pipeline"].tolist(), simulated)
    fig, ax = plt.subplots(figsize=(10, 5.5))
    colors = _colors(plt, len(quality))
    quality = quality.reset_index(drop=True)
    xs = _dodge([float(x.get(p, 0.0)) for p in quality["pipeline"]])
    for i, row in quality.iterrows():
        xv = xs[i]
        err = [[row["mean"] - row["ci_low"]], [row["ci_high"] - row["mean"]]]
        color = colors[i % len(colors)]
        hollow = simulated.get(row["pipeline"], False)
        ax.errorbar([xv], [row["mean"]], yerr=err, fmt="os^Dv<>"[i % 7], ms=9, capsize=4, color=color,
                    mfc="white" if hollow else color, label=labels[row["pipeline"]])
    ax.set_xlabel(unit)
    ax.set_ylabel(f"{metric} (mean, 95% CI)")
    title = f"Quality vs cost: {metric}"
    ax.set_title(title + (" — hollow markers are simulated" if any(simulated.values()) else ""))
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, title="pipeline", frameon=False)
    return _save(fig, path)


def latency_boxes(df: pd.DataFrame, simulated: dict[str, bool], path: Path) -> Path | None:
    """Horizontal box plots: one panel per phase, one box per pipeline."""
    # a phase that never ran (all zero, e.g. rollup "none") would only add an empty panel
    phases = [(m, label) for m, label in _PHASES if df.loc[df["metric"] == m, "value"].fillna(0).abs().sum() > 0]
    if not phases:
        return None
    pipelines = sorted(df["pipeline"].unique())
    labels = _display(pipelines, simulated)
    plt = _pyplot()
    ncols = min(3, len(phases))
    nrows = -(-len(phases) // ncols)
    height = max(3.0, 0.55 * len(pipelines) + 1.5)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols + 2.5, height * nrows), sharey=True,
                             squeeze=False, layout="constrained")
    for ax in axes.flat[len(phases):]:
        ax.set_visible(False)
    for ax, (metric, label) in zip(axes.flat, phases):
        part = df[df["metric"] == metric]
        data = [part.loc[part["pipeline"] == p, "value"].dropna().to_numpy(float) for p in pipelines]
        ax.boxplot([d if len(d) else [np.nan] for d in data], orientation="horizontal", widths=0.6)
        ax.set_yticks(range(1, len(pipelines) + 1), [labels[p] for p in pipelines], fontsize=8)
        ax.set_xlabel(label)
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle("Latency by phase and pipeline" + (" (some simulated)" if any(simulated.values()) else ""))
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
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(3.0 + 1.9 * means.shape[1], 1.2 + 0.42 * means.shape[0]))
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
    """Grouped bars: ``metric`` per category (x) and pipeline (colour), with 95% CI error bars."""
    part = df[(df["metric"] == metric) & (df[category_col].astype(str) != "")]
    if part.empty:
        return None
    agg = aggregate(part, by=["pipeline", category_col])
    categories = sorted(agg[category_col].astype(str).unique())
    pipelines = sorted(agg["pipeline"].unique())
    if len(pipelines) > MAX_BAR_PIPELINES:
        return category_heatmap(agg, metric, category_col, simulated, path)
    labels = _display(pipelines, simulated)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(7.0, 1.3 * len(categories) * max(1, len(pipelines)) ** 0.5 + 4), 5))
    width = 0.8 / len(pipelines)
    colors = _colors(plt, len(pipelines))
    for j, pipeline in enumerate(pipelines):
        mine = agg[agg["pipeline"] == pipeline]
        rows = mine.set_index(mine[category_col].astype(str)).reindex(categories)
        xs = np.arange(len(categories)) - 0.4 + width * (j + 0.5)
        err = np.vstack([rows["mean"] - rows["ci_low"], rows["ci_high"] - rows["mean"]]).clip(min=0)
        ax.bar(xs, rows["mean"], width, yerr=np.nan_to_num(err), capsize=3, label=labels[pipeline],
               color=colors[j % len(colors)],
               hatch="//" if simulated.get(pipeline) else None)
    ax.set_xticks(range(len(categories)), categories)
    ax.set_xlabel("probe category")
    ax.set_ylabel(f"{metric} (mean, 95% CI)")
    ax.set_title(f"{metric} by probe category")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, title="pipeline", frameon=False)
    return _save(fig, path)


def _save(fig, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=110, bbox_inches="tight")  # "tight" keeps outside legends in the file
    plt.close(fig)
    return path
