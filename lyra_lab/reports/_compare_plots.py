"""``comparison_plot``: each pipeline's paired difference from the best, with its 95% CI.

One horizontal row per pipeline (long labels on the y axis, wrapped), the best at the top
on the zero line; pipelines whose comparison came out identical (difference, interval,
p, verdict and n) share one row, labelled as a group.  Filled markers: not significantly
worse than the best after the Holm correction; hollow red: significantly worse.  A pipeline
with no interval (one conversation, or no probe in common) is drawn as a marker alone.
Drawn on a standalone Figure (no pyplot, no global state).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from lyra_lab.reports._figures import FIGURE_WIDTH, fit_text, new_figure, wrap_label
from lyra_lab.reports._figures import save as _save  # a module name of its own: tests capture the figure
from lyra_lab.reports._legible import group_identical, short_labels


def _n_text(tested: pd.DataFrame) -> str:
    n = tested["n_probes"][tested["n_probes"] > 0]
    text = (f"n = {int(n.min())} paired probes" if n.nunique() == 1 else
            f"n = {int(n.min())}–{int(n.max())} paired probes") if len(n) else "no paired probes"
    clusters = tested["n_clusters"][tested["n_clusters"] > 0]
    if len(clusters) and (clusters.to_numpy() == n.to_numpy()).all():
        text += ", each its own unit"
    elif len(clusters):
        text += (f" in {int(clusters.min())}" if clusters.nunique() == 1 else
                 f" in {int(clusters.min())}–{int(clusters.max())}") + " clusters"
    return text


def comparison_plot(table: pd.DataFrame, path: str | Path, alpha: float = 0.05) -> Path:
    """Write the ``compare_all`` table as a PNG at ``path`` and return the path."""
    path = Path(path)
    table = table.reset_index(drop=True)
    metric = str(table["metric"].iloc[0])
    best = str(table["best"].iloc[0])
    tested = table.iloc[1:]
    short, shared = short_labels(list(table["pipeline"].astype(str)))
    columns = ["difference", "ci_low", "ci_high", "p_holm", "not_worse_than_best", "n_probes", "n_clusters"]
    series = {short[str(r["pipeline"])]: [None if pd.isna(r[c]) else r[c] for c in columns]
              for _, r in tested.iterrows()}
    groups = group_identical(series, universe=list(short.values()))
    first = {short[str(p)]: i for i, p in enumerate(table["pipeline"])}
    rows = [table.iloc[0]] + [table.iloc[first[g.first]] for g in groups]
    names = [short[best] + "  (best)"] + [g.label for g in groups]
    labels = [wrap_label(name, 40) for name in names]
    height = 1.6 + 0.2 * sum(label.count("\n") + 1 for label in labels) + 0.12 * len(rows)
    fig = new_figure(figsize=(FIGURE_WIDTH * 0.85, height), layout="constrained")
    ax = fig.subplots()
    y = np.arange(len(rows))[::-1]
    ax.axvline(0.0, color="#888", lw=1, zorder=1)
    for yi, row in zip(y, rows):
        flag = row["not_worse_than_best"]
        worse = not pd.isna(flag) and not bool(flag)
        color = "#c0392b" if worse else "#1f77b4"
        if not pd.isna(row["ci_low"]) and row["ci_high"] - row["ci_low"] > 1e-12:
            err = [[row["difference"] - row["ci_low"]], [row["ci_high"] - row["difference"]]]
            ax.errorbar([row["difference"]], [yi], xerr=err, fmt="none", ecolor=color, capsize=4, lw=1.5, zorder=2)
        marker = "*" if row["pipeline"] == best else "o"
        ax.plot([row["difference"]], [yi], marker=marker, ms=11 if marker == "*" else 7, color=color,
                mfc="white" if worse else color, mew=1.5, ls="none", zorder=3)
        if row["pipeline"] != best and not pd.isna(row["p_holm"]):
            ax.annotate(f"p={row['p_holm']:.3g}", (row["difference"], yi), xytext=(0, 7),
                        textcoords="offset points", ha="center", fontsize=8, color="#444")
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel(f"{metric}: pipeline − best (paired), 95% CI")
    grouped = "; identical results share a row (×N; * = every value the run has)" if len(groups) < len(tested) else ""
    omitted = f"; labels omit what all share: {shared}" if shared else ""
    title = (f"{metric}: difference from the best ({best})\n{_n_text(tested)}; p Holm-adjusted; "
             f"hollow red = worse at α={alpha:g}{grouped}{omitted}")
    ax.set_title(fit_text(title, FIGURE_WIDTH * 0.85 - 1.0, 10), fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return _save(fig, path)
