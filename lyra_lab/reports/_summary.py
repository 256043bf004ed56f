"""The per-pipeline summary table of a run: quality with CIs, context size, build cost and latency.

One row per pipeline (and backend/embedder when the run has those columns).
Quality metrics come with 95% bootstrap intervals over probes; cost and
latency metrics are conversation-level, so their figure is the mean per
conversation (``summarize.cost_usd`` = dollars spent summarizing one
conversation, ``summarize.latency_p95_s`` = the mean over conversations of the
95th-percentile call latency).

Columns lead with the metric that is fair across memory kinds (``FAIR_NOTE``):
``answer_in_context@Btok`` when the run scored at context budgets, else
``evidence_recall@K``.  ``coverage_recall@K`` comes after them, and
``flattery_warnings`` says when it is much higher than answer_in_context for
memories of summaries alone.  Runs written before these names (``recall@K``)
still summarize.

Query latency is also shown as percentiles over every probe of a pipeline
(``recall_latency_p50_s``, ``recall_latency_p95_s``).  A memory system of the grid
(``[grid] systems``) has its ingest figures (``ingest.*``, per conversation) and,
when it cannot trace its hits to turns (rows with ``traces_turns`` false), no
turn-level retrieval figure: the Markdown table says "cannot trace" there.
"""

from __future__ import annotations

import re
from typing import Sequence

import pandas as pd

from lyra_lab.measures import MEASURES, measure_info, shown_in
from lyra_lab.reports._agreement import split_judges
from lyra_lab.stats import aggregate, group_columns

# What the summary shows, and in what order, is the measure registry's (``lyra_lab.measures.MEASURES``, each
# measure's ``shown``): quality with CIs (fair ones first), the rest as means.  ``@K`` expands to every K of
# the run, ``@Kmax`` to the largest, ``@Btok`` to every context budget.
FAIR_NOTE = (
    "Fair across memory kinds: `answer_in_context@Btok` (is the gold answer in the context the recaller "
    "fills with B tokens; every pipeline gets the same room, and a summary counts only if its text kept the "
    "answer) and `evidence_recall@K` (evidence turns retrieved verbatim). `coverage_recall@K` counts a "
    "digest as retrieving every turn it covers, so it flatters memories of summaries."
)
FLATTERY_GAP = 0.2  # coverage recall this much above answer_in_context (absolute) for a summaries-only memory
# Phase figures are as first paid (cache hits keep their original latency and cost);
# ``paid_*`` and ``cached_calls`` say what this run paid (see experiments.cells._cell.phase_metrics).
#: Per-probe latency percentiles over all of a pipeline's probes: (column, metric, percentile).
LATENCY_PERCENTILES: tuple[tuple[str, str, float], ...] = (
    ("recall_latency_p50_s", "recall_latency_s", 50.0), ("recall_latency_p95_s", "recall_latency_s", 95.0))
CANNOT_TRACE = "cannot trace"
_K_METRIC = re.compile(r"^(?P<base>[a-z_]+)@(?P<k>\d+)$")
_B_METRIC = re.compile(r"^(?P<base>[a-z_]+)@(?P<k>\d+)tok$")


def expand_metrics(present: Sequence[str], patterns: Sequence[str]) -> list[str]:
    """Metric names in ``present`` matching ``patterns``, ordered.

    ``x@K`` → every ``x@k`` (ascending), ``x@Kmax`` → the largest ``x@k``,
    ``x@Btok`` → every ``x@<B>tok`` (ascending); other patterns match themselves.
    """
    out = []
    for pattern in patterns:
        for suffix, regex, fmt in (("@Kmax", _K_METRIC, "{}@{}"), ("@K", _K_METRIC, "{}@{}"),
                                   ("@Btok", _B_METRIC, "{}@{}tok")):
            if pattern.endswith(suffix):
                base = pattern[: -len(suffix)]
                ks = sorted(int(m["k"]) for m in map(regex.match, present) if m and m["base"] == base)
                if suffix == "@Kmax":
                    ks = ks[-1:]
                out += [fmt.format(base, k) for k in ks]
                break
        else:
            if pattern in present:
                out.append(pattern)
            # several judges: ``judge[<name>]`` each (see ``reports.split_judges``)
            out += sorted(m for m in present if m.startswith(pattern + "["))
    return out


def main_quality_metric(present: Sequence[str]) -> str | None:
    """The lead metric of plots, the category table and the paired comparisons: the fair one (``FAIR_NOTE``).

    The first measure the registry marks ``fair`` that the run scored, in its first unit: ``answer_in_context``
    at the middle context budget, else ``evidence_recall@10`` (or the largest K); else a legacy ``recall@K``,
    else QA/retention.  The headline of a run that answered is its QA (``headline_metric``).
    """
    fair = [(m.base, m.units[0]) for m in MEASURES.values() if m.fair and m.units] + [("recall", "k")]
    for base, unit in fair:
        if unit == "tok":
            budgets = expand_metrics(present, [f"{base}@Btok"])
            if budgets:
                return budgets[(len(budgets) - 1) // 2]
            continue
        ks = expand_metrics(present, [f"{base}@K"])
        if f"{base}@10" in ks:
            return f"{base}@10"
        if ks:
            return ks[-1]
    for name in ("judge", "qa_f1", "retention", "context_retention"):
        if name in present:
            return name
    return None


def headline_metric(present: Sequence[str]) -> str | None:
    """The metric a run's headline leads with: a run that answered its probes is about its answers.

    A judge's verdict (``judge``, or the first ``judge[<name>]`` of several), else ``qa_f1``; a run
    without QA leads with ``main_quality_metric``.

    >>> headline_metric(["answer_in_context@512tok", "qa_f1"]), headline_metric(["evidence_recall@10"])
    ('qa_f1', 'evidence_recall@10')
    """
    judges = sorted(n for n in present if n == "judge" or n.startswith("judge["))  # one judge, or each by name
    return (judges[0] if judges else "qa_f1" if "qa_f1" in present else None) or main_quality_metric(present)


def summarize_results(
    df: pd.DataFrame, *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0,
    cluster: str | None = None,
) -> pd.DataFrame:
    """The wide summary: one row per pipeline group; ``<metric>``, ``<metric>_ci_low``/``_ci_high``, ``<metric>_n``.

    ``<metric>_n`` counts the values behind each figure (probes for probe
    metrics, replays for conversation metrics): metrics are not all computed on
    every probe (QA may be capped by ``max_probes``), so each has its own n.

    ``degraded`` (when the rows have it): the fallbacks and failed calls over the group's cells (0: none;
    ``format_cells`` marks a degraded pipeline ``⚠ degraded (n)``).

    ``cluster`` (e.g. ``"conversation_id"``) makes the CIs resample whole clusters.
    """
    keys = group_columns(df)
    if "pipeline" not in keys:
        raise KeyError(f"results frame has no 'pipeline' column; it has {list(df.columns)}")
    df = split_judges(df)  # several judges are never pooled under one ``judge`` figure
    present = sorted(df["metric"].unique())
    quality = expand_metrics(present, shown_in("summary", ("quality",)))
    means = expand_metrics(present, shown_in("summary", ("cost", "timing", "bookkeeping")))
    wanted = df[df["metric"].isin(quality + means)]
    agg = aggregate(wanted, by=keys, n_resamples=n_resamples, confidence=confidence, seed=seed, cluster=cluster)
    groups = df[keys].drop_duplicates().sort_values(keys).reset_index(drop=True)
    summary = groups.copy()
    if "simulated" in df.columns:
        sim = df.groupby(keys, dropna=False)["simulated"].agg(lambda s: bool(pd.Series(s).astype(bool).any()))
        summary = summary.merge(sim.rename("simulated").reset_index(), on=keys, how="left")
    if "degraded" in df.columns and "cell_id" in df.columns:  # fallbacks and failed calls over the group's cells
        per_cell = df.groupby(keys + ["cell_id"], dropna=False)["degraded"].max().fillna(0)
        degraded = per_cell.groupby(level=list(range(len(keys))), dropna=False).sum().astype(int)
        summary = summary.merge(degraded.rename("degraded").reset_index(), on=keys, how="left")
        summary["degraded"] = summary["degraded"].fillna(0).astype(int)
    if "traces_turns" in df.columns:  # a memory system's rows: False when its hits name no turns
        traces = df.groupby(keys, dropna=False)["traces_turns"].agg(lambda s: not (s == False).any())  # noqa: E712
        summary = summary.merge(traces.rename("traces_turns").reset_index(), on=keys, how="left")
    probe_rows = df[df["probe_id"].astype(str) != ""] if "probe_id" in df.columns else df
    n_probes = probe_rows.groupby(keys, dropna=False)["probe_id"].nunique() if "probe_id" in df.columns else None
    if n_probes is not None:
        summary = summary.merge(n_probes.rename("n_probes").reset_index(), on=keys, how="left")
        summary["n_probes"] = summary["n_probes"].fillna(0).astype(int)
    for metric in quality + means:
        part = agg[agg["metric"] == metric].drop(columns="metric")
        cols = {"mean": metric, "ci_low": f"{metric}_ci_low", "ci_high": f"{metric}_ci_high", "n": f"{metric}_n"}
        keep = keys + (["mean", "ci_low", "ci_high", "n"] if metric in quality else ["mean", "n"])
        summary = summary.merge(part[keep].rename(columns=cols), on=keys, how="left")
    for column, metric, q in LATENCY_PERCENTILES:
        values = df[df["metric"] == metric].dropna(subset=["value"])
        if len(values):
            pct = values.groupby(keys, dropna=False)["value"].quantile(q / 100.0)
            count = values.groupby(keys, dropna=False)["value"].size()
            summary = summary.merge(pct.rename(column).reset_index(), on=keys, how="left")
            summary = summary.merge(count.rename(f"{column}_n").reset_index(), on=keys, how="left")
    return summary


def turn_level(metric: str) -> bool:
    """Whether ``metric`` needs hits traced to turns (``evidence_recall@10``, ``mrr``, ``ndcg@5`` ...)."""
    info = measure_info(metric.split("@", 1)[0].split("[", 1)[0])
    return info is not None and info.traced


MIN_CI_VALUES = 10  # fewer values than this behind a CI: warn that it is unreliable


def ci_warnings(df: pd.DataFrame, cluster: str | None = None) -> list[str]:
    """Warnings for the report: CIs that rest on one cluster or on few values, and ``flattery_warnings``."""
    keys = group_columns(df)
    quality = expand_metrics(sorted(df["metric"].unique()), shown_in("summary", ("quality",)))
    part = df[df["metric"].isin(quality)]
    if part.empty:
        return []
    out = []
    if cluster is not None:
        per_group = part.groupby(keys + ["metric"], dropna=False)[cluster].nunique()
        if (per_group <= 1).any():
            out.append(f"CIs resample whole {cluster} clusters, but some pipelines have only one {cluster}: "
                       "their CIs have zero width and say nothing about uncertainty. "
                       f"Add {cluster}s or report without clustering.")
    counts = part.dropna(subset=["value"]).groupby(keys + ["metric"], dropna=False)["value"].size()
    few = counts[counts < MIN_CI_VALUES].groupby(level="metric").min()
    if len(few):
        listed = ", ".join(f"{m} (n={n})" for m, n in _families(few.items()))
        out.append(f"CIs rest on fewer than {MIN_CI_VALUES} probes for some pipelines: {listed}. "
                   "Intervals from so few values are unreliable; add probes or conversations.")
    # The report shows these warnings: the flattering-summaries check rides along with them.
    return out + flattery_warnings(df)


def _families(metric_n) -> list[tuple[str, int]]:
    """``[("ndcg@1", 7), ("ndcg@5", 7), ("mrr", 7)]`` → ``[("mrr", 7), ("ndcg@1/5", 7)]``: one entry per family and n."""
    groups: dict[tuple[str, str, int], list[int]] = {}
    for metric, n in metric_n:
        m = _B_METRIC.match(metric) or _K_METRIC.match(metric)
        key = (m["base"], "tok" if m and metric.endswith("tok") else "", int(n)) if m else (metric, "", int(n))
        groups.setdefault(key, []).extend([int(m["k"])] if m else [])
    return [(f"{base}@{'/'.join(map(str, sorted(ks)))}{tok}" if ks else base, n)
            for (base, tok, n), ks in sorted(groups.items())]


def flattery_warnings(df: pd.DataFrame, gap: float = FLATTERY_GAP) -> list[str]:
    """A warning naming the pipelines whose digests cover the evidence but whose text lost the answer.

    For each pipeline (group), over the probes that have both figures: the mean
    ``coverage_recall@Kmax`` against the mean ``answer_in_context`` at the largest
    budget (else ``retention``, the answer anywhere in memory).  Flagged when
    coverage exceeds it by ``gap`` or more *and* exceeds ``evidence_recall@Kmax``
    by ``gap`` or more — the coverage came from condensed entries (digests,
    summaries), not from the turns themselves.
    """
    present = sorted(df["metric"].unique())
    coverage = expand_metrics(present, ["coverage_recall@Kmax"])
    direct = expand_metrics(present, ["evidence_recall@Kmax"])
    answer = expand_metrics(present, ["answer_in_context@Btok"])[-1:] or [m for m in ("retention",) if m in present]
    if not (coverage and direct and answer) or "probe_id" not in df.columns:
        return []
    # group by what varies: a run on one backend and one embedder names pipelines alone
    keys = [k for k in group_columns(df) if k == "pipeline" or df[k].nunique(dropna=False) > 1]
    names = [coverage[0], direct[0], answer[0]]
    probe_keys = keys + [c for c in ("conversation_id", "seed", "probe_id") if c in df.columns]
    part = df[df["metric"].isin(names)]
    wide = part.pivot_table(index=probe_keys, columns="metric", values="value", aggfunc="mean").dropna()
    if wide.empty:
        return []
    means = wide.groupby(level=keys, dropna=False)[names].mean()
    counts = wide.groupby(level=keys, dropna=False).size()
    flagged = means[(means[names[0]] - means[names[2]] >= gap) & (means[names[0]] - means[names[1]] >= gap)]
    if flagged.empty:
        return []
    listed = "; ".join(
        f"{_label(idx)}: {row[names[0]]:.2f} vs {row[names[2]]:.2f} (n={int(counts.loc[idx])})"
        for idx, row in flagged.iterrows())
    return [f"Summaries flatter: {names[0]} is at least {gap:.1f} above {names[2]} (and above {names[1]}) for "
            f"{len(flagged)} pipeline(s) — {listed}. Coverage counts a digest as retrieving every turn it "
            "covers, but these digests' text lost the answer. Compare pipelines on "
            f"{names[2]} (the same context room for every pipeline) or {names[1]} (evidence turns retrieved "
            "verbatim), which mean the same for every memory kind."]


def _label(index: object) -> str:
    return " | ".join(map(str, index)) if isinstance(index, tuple) else str(index)


# The Markdown summary shows the headline columns (each measure's ``shown.markdown``), fair ones first;
# summary.csv and metrics.csv hold everything.
MARKDOWN_METRICS: tuple[str, ...] = shown_in("markdown")


def format_cells(summary: pd.DataFrame, keys: Sequence[str],
                 columns: Sequence[str] | None = None) -> tuple[list[str], list[list[str]]]:
    """Header and text cells of the summary: ``0.62 [0.55, 0.69] n=40`` for quality, ``mean n=…`` otherwise.

    ``columns`` picks the value columns shown (default: all but the CI bounds and n).
    """
    present = list(columns) if columns is not None else [
        c for c in summary.columns if c not in keys and c not in ("degraded", "traces_turns")
        and not c.endswith(("_ci_low", "_ci_high", "_n"))]
    header = list(keys) + present
    body = []
    for _, row in summary.iterrows():
        cells = []
        for col in header:
            value = row[col]
            if col == "pipeline":
                degraded = int(row.get("degraded", 0) or 0)
                cells.append(str(value) + (" (simulated)" if bool(row.get("simulated", False)) else "")
                             + (f" ⚠ degraded ({degraded})" if degraded > 0 else ""))
            elif pd.isna(value) and turn_level(col) and _untraced(row):
                cells.append(CANNOT_TRACE)
            elif f"{col}_ci_low" in summary.columns and pd.notna(value):
                cells.append(f"{value:.3f} [{row[f'{col}_ci_low']:.3f}, {row[f'{col}_ci_high']:.3f}]"
                             + _n(row, col))
            elif isinstance(value, float):
                cells.append("" if pd.isna(value) else _fmt(col, value) + _n(row, col))
            else:
                cells.append(str(value))
        body.append(cells)
    return header, body


def format_markdown(summary: pd.DataFrame, keys: Sequence[str], columns: Sequence[str] | None = None) -> str:
    """The summary as a Markdown table (cells as ``format_cells`` writes them)."""
    header, body = format_cells(summary, keys, columns)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |" for cells in body]
    return "\n".join(lines) + "\n"


def _untraced(row: pd.Series) -> bool:
    """Whether the summary row is a memory system that cannot trace its hits to turns."""
    value = row.get("traces_turns")
    return value is not None and not pd.isna(value) and not bool(value)


def _n(row: pd.Series, col: str) -> str:
    n = row.get(f"{col}_n")
    return "" if n is None or pd.isna(n) else f" n={int(n)}"


def _fmt(col: str, value: float) -> str:
    if col.endswith("cost_usd"):
        return f"${value:.4f}"
    if col.endswith("_s"):
        return f"{value:.3f} s"
    return f"{value:.1f}" if abs(value) >= 100 else f"{value:.3f}"
