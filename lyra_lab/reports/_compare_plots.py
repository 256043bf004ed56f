"""``comparison_plot``: each pipeline's paired difference from the best, with its 95% CI.

One horizontal row per pipeline (long labels on the y axis, wrapped), the best
at the top on the zero line.  Filled markers: not significantly worse than the
best after the Holm correction; hollow red: significantly worse.  A pipeline
with no interval (one conversation, or no probe in common) is drawn as a
marker alone.  Drawn on a standalone Figure (no pyplot, no global state).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from lyra_lab.reports._plots import _save, new_figure, wrap_label


def comparison_plot(table: pd.DataFrame, path: str | Path, alpha: float = 0.05) -> Path:
    """Write the ``compare_all`` table as a PNG at ``path`` and return the path."""
    path = Path(path)
    rows = table.reset_index(drop=True)
    metric = str(rows["metric"].iloc[0])
    best = str(rows["best"].iloc[0])
    tested = rows.iloc[1:]
    n = tested["n_probes"][tested["n_probes"] > 0]
    n_text = (f"n = {int(n.min())} paired probes" if n.nunique() == 1 else
              f"n = {int(n.min())}–{int(n.max())} paired probes") if len(n) else "no paired probes"
    clusters = tested["n_clusters"][tested["n_clusters"] > 0]
    if len(clusters) and (clusters.to_numpy() == n.to_numpy()).all():
        n_text += ", each its own unit"
    elif len(clusters):
        n_text += (f" in {int(clusters.min())}" if clusters.nunique() == 1 else
                   f" in {int(clusters.min())}–{int(clusters.max())}") + " clusters"
    fig = new_figure(figsize=(8.5, 1.2 + 0.42 * len(rows)), layout="constrained")
    ax = fig.subplots()
    y = np.arange(len(rows))[::-1]
    ax.axvline(0.0, color="#888", lw=1, zorder=1)
    for yi, (_, row) in zip(y, rows.iterrows()):
        flag = row["not_worse_than_best"]
        worse = not pd.isna(flag) and not bool(flag)
        color = "#c0392b" if worse else "#1f77b4"
        if not pd.isna(row["ci_low"]):
            err = [[row["difference"] - row["ci_low"]], [row["ci_high"] - row["difference"]]]
            ax.errorbar([row["difference"]], [yi], xerr=err, fmt="none", ecolor=color, capsize=4, lw=1.5, zorder=2)
        marker = "*" if row["pipeline"] == best else "o"
        ax.plot([row["difference"]], [yi], marker=marker, ms=11 if marker == "*" else 7, color=color,
                mfc="white" if worse else color, mew=1.5, ls="none", zorder=3)
        if row["pipeline"] != best and not pd.isna(row["p_holm"]):
            ax.annotate(f"p={row['p_holm']:.3g}", (row["difference"], yi), xytext=(0, 6),
                        textcoords="offset points", ha="center", fontsize=8, color="#444")
    labels = [wrap_label(p, 40) + ("  (best)" if p == best else "") for p in rows["pipeline"]]
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel(f"{metric}: pipeline − best (paired), 95% CI")
    ax.set_title(f"{metric}: difference from the best ({wrap_label(best, 60)})\n{n_text}; "
                 f"p Holm-adjusted; hollow red = worse at α={alpha:g}", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return _save(fig, path)
