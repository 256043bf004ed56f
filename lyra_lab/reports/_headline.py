"""The line a report opens on: the lead metric's best pipelines, each with its 95% CI and n.

``headline(summary, metric, keys, degraded)`` reads the report's summary table (one row
per pipeline group, ``<metric>``, ``<metric>_ci_low``/``_ci_high``/``_n``) and keeps the
best ``TOP``; a degraded pipeline keeps its mark here as everywhere its figures appear.  The
ceilings (``_contenders``) are left out of the ranking and named in the caption.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import Collection

import pandas as pd

from lyra_lab.reports._degraded import MARK, DegradedPipeline

TOP = 3


@dataclass(frozen=True)
class HeadlineRow:
    """One pipeline of the headline."""

    label: str
    mean: float
    ci_low: float
    ci_high: float
    n: int
    degraded: int = 0  # cells that fell back or lost calls (0: none)

    def text(self) -> str:
        ci = "" if pd.isna(self.ci_low) else f" [{self.ci_low:.3f}, {self.ci_high:.3f}]"
        mark = f" {MARK} ({self.degraded})" if self.degraded else ""
        return f"{self.label}{mark}: {self.mean:.3f}{ci}, n = {self.n}"


@dataclass(frozen=True)
class Headline:
    """The lead metric, its best pipelines (best first) and how many pipelines the run compared."""

    metric: str
    rows: tuple[HeadlineRow, ...]
    compared: int
    tied: int = 1  # pipelines whose mean equals the best's
    ceilings: int = 0  # ceiling pipelines left out of the ranking (``_contenders``)

    def caption(self) -> str:
        best = (f"{self.tied} pipelines tie at the best; {len(self.rows)} of them" if self.tied > len(self.rows)
                else f"best {len(self.rows)} of {self.compared} pipelines")
        apart = f", {self.ceilings} ceiling{'s' * (self.ceilings != 1)} apart" if self.ceilings else ""
        return f"{self.metric}, {best}{apart} (mean over probes [95% CI], n probes)"

    def html(self) -> str:
        items = "".join(f"<li>{html.escape(r.text())}</li>" for r in self.rows)
        return f"<b>{html.escape(self.caption())}</b>:<ol>{items}</ol>"


def headline(summary: pd.DataFrame, metric: str | None, keys: list[str],
             degraded: dict[str, DegradedPipeline] | None = None,
             ceilings: Collection[str] = ()) -> Headline | None:
    """The best ``TOP`` rows of ``summary`` by ``metric`` (None without the metric or its CI columns).

    ``ceilings``: the ``pipeline`` values of the run's ceilings (``_contenders.ceiling_pipelines`` of its
    rows), left out of the ranking and counted in the caption.
    """
    if metric is None or metric not in summary.columns or f"{metric}_ci_low" not in summary.columns:
        return None
    ceiling = summary["pipeline"].astype(str).isin(set(ceilings)) if "pipeline" in summary.columns \
        else pd.Series(False, index=summary.index)
    ranked = summary[~ceiling].dropna(subset=[metric]).sort_values(metric, ascending=False, kind="stable")
    if ranked.empty:
        return None
    degraded = degraded or {}
    rows = []
    for _, r in ranked.head(TOP).iterrows():
        mark = degraded.get(str(r.get("pipeline", "")))
        label = " | ".join(str(r[k]) for k in keys if k in r.index)
        n = r.get(f"{metric}_n")
        rows.append(HeadlineRow(label, float(r[metric]), float(r[f"{metric}_ci_low"]),
                                float(r[f"{metric}_ci_high"]), 0 if pd.isna(n) else int(n),
                                mark.total if mark is not None else 0))
    tied = int((ranked[metric] == ranked[metric].max()).sum())
    return Headline(metric, tuple(rows), len(ranked), tied, int(ceiling.sum()))



def run_headline(run_dir: Path) -> Headline | None:
    """The headline of a reported run: ``report/summary.csv``'s lead metric, grouped by what varies.

    The key columns are the pipeline and every other group column whose value differs between rows
    (a backend, an embedder, a seed), as in the report's own tables; degraded pipelines keep their mark.
    """
    from lyra_lab.reports._contenders import ceiling_pipelines
    from lyra_lab.reports._degraded import degraded_pipelines
    from lyra_lab.runs import load_results

    summary = pd.read_csv(Path(run_dir) / "report" / "summary.csv")
    rows = load_results(run_dir, write=False)
    return summary_headline(summary, degraded_pipelines(rows), ceiling_pipelines(rows))


def summary_headline(summary: pd.DataFrame, degraded: dict[str, DegradedPipeline] | None = None,
                     ceilings: Collection[str] = ()) -> Headline | None:
    """The headline of a summary table (``report/summary.csv``'s shape): its lead metric, grouped by what varies."""
    from lyra_lab.reports._summary import headline_metric
    from lyra_lab.stats import group_columns

    metric = headline_metric([str(c) for c in summary.columns])
    keys = [c for c in group_columns(summary) if c == "pipeline" or summary[c].nunique(dropna=False) > 1]
    return headline(summary, metric, keys, degraded, ceilings)
