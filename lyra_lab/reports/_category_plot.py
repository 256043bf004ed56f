"""``by_category``: the headline metric per pipeline and probe category, as a heatmap with n in every cell.

Rows are pipelines, one row for pipelines whose every cell is identical (labelled as a group);
columns are categories.  A cell shows its mean, its 95% CI and its n; a cell resting on fewer
than ``SMALL_N`` probes is greyed and hatched and shows its mean and n alone, because an
interval from two probes ("1.00 [1.00, 1.00]") would look as certain as one from two hundred.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from lyra_lab.reports._figures import FIGURE_WIDTH, fit_text, new_figure, save, simulated_note, wrap_label
from lyra_lab.reports._legible import SMALL_N, group_identical, is_small, n_phrase, shade_small, short_labels
from lyra_lab.stats import aggregate


def category_matrix(agg: pd.DataFrame, category_col: str, column: str = "mean") -> pd.DataFrame:
    """Pipelines (rows) × categories (columns) of one column of an ``aggregate`` frame."""
    table = agg.assign(_category=agg[category_col].astype(str)).pivot(
        index="pipeline", columns="_category", values=column)
    table.columns.name = None
    return table.sort_index().reindex(sorted(table.columns), axis=1)


def by_category(df: pd.DataFrame, metric: str, category_col: str, simulated: dict[str, bool],
                path: Path) -> Path | None:
    """The heatmap of ``metric`` by ``category_col`` (see the module docstring), or None without categories."""
    part = df[(df["metric"] == metric) & (df[category_col].astype(str) != "")]
    if part.empty:
        return None
    agg = aggregate(part, by=["pipeline", category_col])
    means, low, high, n = (category_matrix(agg, category_col, c) for c in ("mean", "ci_low", "ci_high", "n"))
    short, shared = short_labels(list(means.index))
    series = {short[p]: [*means.loc[p], *low.loc[p], *high.loc[p], *n.loc[p], simulated.get(p, False)]
              for p in means.index}
    groups = group_identical(series, universe=list(short.values()))
    pipeline_of = {short[p]: p for p in means.index}
    rows = [pipeline_of[g.first] for g in groups]
    labels = [wrap_label(g.label, 36) for g in groups]
    lines = sum(label.count("\n") + 1 for label in labels)
    width = min(FIGURE_WIDTH, 3.6 + 1.55 * means.shape[1])
    fig = new_figure(figsize=(width, 2.2 + 0.17 * lines + 0.2 * len(rows)), layout="constrained")
    ax = fig.subplots()
    values = means.loc[rows].to_numpy(dtype=float)
    vmin = min(0.0, float(np.nanmin(values)))
    vmax = max(1.0, float(np.nanmax(values)))
    image = ax.imshow(values, cmap="viridis", aspect="auto", vmin=vmin, vmax=vmax)
    cmap = image.get_cmap()
    for i, pipeline in enumerate(rows):
        for j, category in enumerate(means.columns):
            value, count = means.at[pipeline, category], n.at[pipeline, category]
            if pd.isna(value):
                continue
            box = None
            if is_small(count):
                shade_small(ax, j, i)
                text, color = f"{value:.2f}\nn={int(count)}", "black"
                # the hatching stops at the figure's text: a plain box behind it keeps it legible
                box = {"boxstyle": "round,pad=0.25", "facecolor": "white", "edgecolor": "none", "alpha": 0.85}
            else:
                ci = f"[{low.at[pipeline, category]:.2f}, {high.at[pipeline, category]:.2f}]"
                text = f"{value:.2f} {ci}\nn={int(count)}"
                red, green, blue, _ = cmap((value - vmin) / ((vmax - vmin) or 1.0))
                color = "black" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.5 else "white"
            ax.text(j, i, text, ha="center", va="center", fontsize=7, color=color, linespacing=1.1, bbox=box)
    ax.set_xticks(range(means.shape[1]), [textwrap.fill(str(c), 16) for c in means.columns], fontsize=8)
    ax.set_yticks(range(len(rows)), labels, fontsize=7.5)
    ax.set_xlabel("probe category")
    hatched = f"; hatched: n < {SMALL_N}" if any(is_small(c) for c in n.loc[rows].to_numpy().ravel() if c == c) else ""
    grouped = ("; identical pipelines share a row (×N; * = every value the run has)"
               if len(rows) < len(means.index) else "")
    omitted = f"\nlabels omit what all share: {shared}" if shared else ""
    fig.suptitle(fit_text(f"{metric} by probe category: mean [95% CI], n per cell ({n_phrase(agg['n'])})"
                          f"{hatched}{grouped}{simulated_note(simulated, rows, 'some rows')}{omitted}", width - 0.5, 9),
                 fontsize=9)
    fig.colorbar(image, ax=ax, label=metric, fraction=0.04)
    return save(fig, path)
