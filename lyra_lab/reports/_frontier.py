"""The frontier: each pipeline's quality against what it costs per probe, the non-dominated ones marked.

LongMemEval-V2 ranks memory methods on an accuracy–latency frontier; a run of lyra-lab asks the same of its
pipelines on three costs at once.  Per pipeline (the labels of every other table, degraded ones marked):

* **quality**: the run's headline measure (``_summary.headline_metric``: the judge's verdict when the run
  judged, else ``qa_f1``, else the fair retrieval measure), its mean, 95% CI and n from ``summary.csv``;
* **context tokens**: the mean per probe of ``context_tokens`` (the rendered context the recaller filled);
* **latency per probe**: the mean over probes of the sum of the probe-level *timing* measures of the
  measure registry (``lyra_lab.measures``: recall, and answering when the run answered), as measured when
  the calls were paid; tokens and latency over the probes the quality measure scored (a run answering a
  sample of its probes is timed on the answered ones);
* **dollars per probe**: every *cost* measure in dollars (``*_usd``: answering, and building the memory, per
  conversation) summed over the pipeline's rows and divided by its probes.

Which rows are costs and timings is the registry's (``MeasureInfo.kind``), not a list here.  On each cost
axis a pipeline is **dominated** when another has at least its quality at no more cost, and more of one or
less of the other (on the means).  The rest form the **frontier**; two pipelines equal on both are both on it, each named as the
other's tie.  A dominated pipeline is named "dominated by X" only with the evidence to say it: the
dominator's paired quality difference, with a CI above 0 and a paired test's p < 0.05 (``_frontier_evidence``); else "dominated on
means by X, not significant", the difference, CI and n beside it.  The ceilings (``recall.ceiling_names``: ``oracle``, told the gold evidence, and
``full_context``, given the whole history) are no contenders: drawn and listed beside the pipelines they
bound, never on a frontier nor dominating one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Sequence, Unpack

import pandas as pd

from lyra_lab.measures import Measure, MeasureInfo
from lyra_lab.reports._contenders import ceiling_words
from lyra_lab.reports._frontier_evidence import MAX_TESTED, DominanceEvidence, PairedQuality, Resampling
from lyra_lab.reports._sections import TableSection
from lyra_lab.stats import row_pipeline_labels

TITLE = "Frontier: quality against cost"
CONTEXT = "context_tokens"
#: The cost axes, in the order the table and the figure show them: (key, axis label, unit format).
AXES: tuple[tuple[str, str, str], ...] = (
    ("tokens", "context tokens per probe", "{:,.0f}"),
    ("latency", "latency per probe (s)", "{:.3g}"),
    ("dollars", "dollars per probe", "${:.4g}"),
)


@dataclass(frozen=True)
class FrontierPoint:
    """One pipeline on one cost axis: its quality (higher is better) and its cost (lower is better)."""

    label: str
    quality: float
    cost: float


@dataclass(frozen=True)
class Dominance:
    """Where a pipeline stands on one axis.

    Attributes:
        label: the pipeline.
        frontier: True when no contender dominates it (False for a point without figures).
        dominated_by: the pipelines that dominate it, best quality first, then least cost.
        ties: pipelines with its very quality and cost (on the frontier with it).
        evidence: the paired tests of its dominators, in ``dominated_by``'s order, until one shows the
            dominance (at most ``MAX_TESTED``; empty: not tested).
    """

    label: str
    frontier: bool
    dominated_by: tuple[str, ...] = ()
    ties: tuple[str, ...] = ()
    evidence: tuple[DominanceEvidence, ...] = ()

    @property
    def shown_by(self) -> tuple[str, ...]:
        """The dominators whose dominance holds beyond the noise (``DominanceEvidence.shown``)."""
        return tuple(e.dominator for e in self.evidence if e.shown)


def pareto(points: Sequence[FrontierPoint]) -> dict[str, Dominance]:
    """Each point's ``Dominance`` among ``points`` (a NaN quality or cost: neither on the frontier nor dominating).

    >>> marks = pareto([FrontierPoint("a", 0.8, 10), FrontierPoint("b", 0.7, 20), FrontierPoint("c", 0.9, 30)])
    >>> [(m.label, m.frontier, m.dominated_by) for m in marks.values()]
    [('a', True, ()), ('b', False, ('a',)), ('c', True, ())]
    """
    valid = [p for p in points if not (math.isnan(p.quality) or math.isnan(p.cost))]
    out = {}
    for p in points:
        if p not in valid:
            out[p.label] = Dominance(p.label, False)
            continue
        better = [o for o in valid if o.label != p.label and o.quality >= p.quality and o.cost <= p.cost
                  and (o.quality > p.quality or o.cost < p.cost)]
        ties = tuple(o.label for o in valid if o.label != p.label and o.quality == p.quality and o.cost == p.cost)
        order = sorted(better, key=lambda o: (-o.quality, o.cost, o.label))
        out[p.label] = Dominance(p.label, not better, tuple(o.label for o in order), ties)
    return out


@dataclass(frozen=True)
class PipelineCosts:
    """One pipeline's quality (mean, 95% CI, n) and its three costs per probe (NaN: the run has no such figure)."""

    label: str
    quality: float
    low: float
    high: float
    n: int
    tokens: float
    latency: float
    dollars: float
    ceiling: bool = False  # a ceiling recaller (oracle, full_context): drawn, never a contender

    def cost(self, axis: str) -> float:
        """The cost on ``axis`` (a key of ``AXES``)."""
        return float({"tokens": self.tokens, "latency": self.latency, "dollars": self.dollars}[axis])


@dataclass
class FrontierSection(TableSection):
    """The section, with what its figure draws: the pipelines, the axes drawn and each axis' marks."""

    metric: str = ""
    pipelines: list[PipelineCosts] = field(default_factory=list)
    axes: list[str] = field(default_factory=list)
    marks: dict[str, dict[str, Dominance]] = field(default_factory=dict)


def _info(name: str) -> MeasureInfo | None:
    try:
        return Measure.parse(name).info
    except ValueError:
        return None


def _per_probe_costs(df: pd.DataFrame, metric: str | None = None) -> pd.DataFrame:
    """Per pipeline label: ``tokens``, ``latency`` and ``dollars`` per probe (see the module docstring).

    Tokens and latency are over the probes the quality ``metric`` scored (a run that answers a sample of
    its probes is timed on the answered ones, whose latency holds the answer), all probes without it.
    """
    probe = df["probe_id"].astype(str) != ""
    infos = {name: _info(str(name)) for name in df["metric"].unique()}
    timing = [m for m, i in infos.items() if i is not None and i.kind == "timing" and i.level == "probe"
              and Measure.parse(str(m)).cutoff is None]
    dollars = [m for m, i in infos.items() if i is not None and i.kind == "cost" and str(m).endswith("_usd")]
    label = row_pipeline_labels(df)
    frame = df.assign(label=label)
    key = ["label", "conversation_id", "probe_id"] + (["seed"] if "seed" in df.columns else [])
    probes = frame[probe].groupby("label")[key[1:]].apply(lambda rows: len(rows.drop_duplicates()))
    scored = probe
    if metric is not None and (frame["metric"] == metric).any():
        keys = frame.loc[probe & (frame["metric"] == metric), key].drop_duplicates()
        scored = probe & frame[key].merge(keys, how="left", on=key, indicator=True)["_merge"].eq("both").to_numpy()
    tokens = frame[scored & (frame["metric"] == CONTEXT)].groupby("label")["value"].mean()
    timed = frame[scored & frame["metric"].isin(timing)]
    latency = timed.groupby(key)["value"].sum().groupby("label").mean() if len(timed) else pd.Series(dtype=float)
    paid = frame[frame["metric"].isin(dollars)].groupby("label")["value"].sum()
    out = pd.DataFrame({"tokens": tokens, "latency": latency}).reindex(probes.index)
    out["dollars"] = (paid.reindex(probes.index).fillna(0.0) / probes) if dollars else math.nan
    return out


def frontier_costs(summary: pd.DataFrame, df: pd.DataFrame, metric: str,
                   ceilings: Sequence[str] = ()) -> list[PipelineCosts]:
    """Each pipeline's quality (``summary``'s ``metric`` columns) and costs per probe (``df``'s rows).

    ``summary`` and ``df`` carry the same pipeline labels (both marked alike when degraded); ``ceilings`` are the
    recallers that are ceilings (``recall.ceiling_names``).
    """
    if metric not in summary.columns or "probe_id" not in df.columns:
        return []
    labels = row_pipeline_labels(summary)
    costs = _per_probe_costs(df, metric)
    recaller = (df.assign(label=row_pipeline_labels(df)).groupby("label")["recaller"].first().astype(str)
                if "recaller" in df.columns else pd.Series(dtype=str))
    out = []
    for label, (_, row) in zip(labels, summary.iterrows()):
        if pd.isna(row[metric]) or label not in costs.index:
            continue
        n = row.get(f"{metric}_n")
        c = costs.loc[label]
        out.append(PipelineCosts(str(label), float(row[metric]), float(row.get(f"{metric}_ci_low", math.nan)),
                                 float(row.get(f"{metric}_ci_high", math.nan)), 0 if pd.isna(n) else int(n),
                                 float(c["tokens"]), float(c["latency"]), float(c["dollars"]),
                                 str(recaller.get(label, "")) in set(ceilings)))
    return out


def _ci(p: PipelineCosts) -> str:
    ci = "" if math.isnan(p.low) else f" [{p.low:.3f}, {p.high:.3f}]"
    return f"{p.quality:.3f}{ci} (n={p.n})"


def with_evidence(marks: dict[str, Dominance], costs: dict[str, float], tests: PairedQuality) -> dict[str, Dominance]:
    """``marks`` with each dominated pipeline's dominators tested (``costs``: each pipeline's on this axis)."""
    out = {}
    for label, mark in marks.items():
        found: list[DominanceEvidence] = []
        for d in mark.dominated_by[:MAX_TESTED]:  # best quality first, until one shows it
            found.append(tests.evidence(d, label, costs[d] < costs[label]))
            if found[-1].shown:
                break
        out[label] = replace(mark, evidence=tuple(found))
    return out


def standing(mark: Dominance | None, ceiling: bool = False) -> str:
    """A pipeline's cell on one axis: frontier, a ceiling, dominated (with the evidence), or "—"."""
    if ceiling:
        return "ceiling (not a contender)"
    if mark is None or (not mark.frontier and not mark.dominated_by):
        return "—"
    if mark.frontier:
        return "frontier" + (f" (ties {', '.join(mark.ties)})" if mark.ties else "")
    shown = [e for e in mark.evidence if e.shown]
    if shown:
        more = f" (and {len(shown) - 1} more)" if len(shown) > 1 else ""
        return f"dominated by {shown[0].dominator}{more}: {shown[0].text()}"
    first = mark.evidence[0].text() if mark.evidence else "untested"
    more = f" (and {len(mark.dominated_by) - 1} more)" if len(mark.dominated_by) > 1 else ""
    return f"dominated on means by {mark.dominated_by[0]}{more}, not significant: {first}"


def frontier_section(summary: pd.DataFrame, df: pd.DataFrame, metric: str | None,
                     ceilings: Sequence[str] = (), **resampling: Unpack[Resampling]) -> FrontierSection | None:
    """The section for a run; None without a headline measure or a pipeline with figures.

    ``resampling`` (``n_resamples``, ``seed``): of the paired tests behind "dominated" (``_frontier_evidence``).
    """
    if metric is None:
        return None
    pipelines = frontier_costs(summary, df, metric, ceilings)
    if not pipelines:
        return None
    tests = PairedQuality(df, metric, resampling.get("n_resamples", 1000), resampling.get("seed", 0))
    notes = [f"Quality is the run's headline measure, `{metric}`: mean [95% CI] (n probes). Costs are per probe: "
             "the rendered context's tokens; latency, the registry's per-probe timings summed (recall, and "
             "answering when the run answered), as measured when the calls were paid; dollars, every cost in "
             "dollars (answering, and building the memory) over the pipeline's probes. On each axis a pipeline "
             "is dominated on means when another has at least its quality at no more cost. \"Dominated by X\" "
             "needs the evidence: X's quality minus the pipeline's (Δ), a paired difference on the probes both "
             "scored, with a CI above 0 and a sign-flip p below 0.05 (or X strictly cheaper and Δ = 0 in every "
             "resample); else it is "
             "\"dominated on means by X, not significant\". Δ [95% CI], p, n paired probes: "
             f"{tests.method()}."]
    drawn = []
    for axis, name, _ in AXES:
        values = [p.cost(axis) for p in pipelines if not math.isnan(p.cost(axis))]
        if not values:
            notes.append(f"No {name}: the run has no such figure.")
        elif axis == "dollars" and all(v == 0 for v in values):
            notes.append("Every pipeline's dollars per probe is $0 (a local model, or no LLM): no dollars axis.")
        else:
            drawn.append(axis)
    if any(p.ceiling for p in pipelines):
        notes.append("The ceilings are shown beside the pipelines they bound, never on a frontier nor dominating "
                     f"one. {ceiling_words(df)}")
    contenders = [p for p in pipelines if not p.ceiling]
    marks = {axis: with_evidence(pareto([FrontierPoint(p.label, p.quality, p.cost(axis)) for p in contenders]),
                                 {p.label: p.cost(axis) for p in contenders}, tests) for axis in drawn}
    header = ["pipeline", metric] + [name for axis, name, _ in AXES if axis in drawn] + [
        f"on {name.split(' per ')[0]}" for axis, name, _ in AXES if axis in drawn]
    rows = []
    for p in sorted(pipelines, key=lambda p: (-p.quality, p.label)):
        costs = [fmt.format(p.cost(axis)) if not math.isnan(p.cost(axis)) else "—"
                 for axis, _, fmt in AXES if axis in drawn]
        rows.append([p.label, _ci(p), *costs, *(standing(marks[a].get(p.label), p.ceiling) for a in drawn)])
    tables = [(f"{metric} against the cost per probe, best first", header, rows)]
    return FrontierSection(TITLE, "frontier", notes, tables, metric=metric, pipelines=pipelines, axes=drawn,
                           marks=marks)
