"""Retrieval and answering apart: was the evidence in the answerer's context, and how right was it either way?

A third-party audit of memory systems found P(correct | gold evidence retrieved) near 0.96 for every
system: they differed in retrieval alone.  This section asks the same of a run.  Per pipeline, over
its answered probes with evidence (``evidence_in_context`` rows, ``measures._in_context``):

* ``evidence in context``: the share of probes whose every evidence turn was in the context;
* ``accuracy | in`` and ``accuracy | not in``: the mean accuracy of those probes and of the rest;

each a mean with a 95% bootstrap CI resampling whole conversations (probes, when all come from one
conversation: one cluster would give an interval of width 0; ``resampling_units``), and its n.  "Accuracy" is the
first of ``ACCURACY`` the run has: the judge's verdict when it judged (several judges: their mean per
probe), else ``qa_f1`` (token F1 under the run's QA scorer), and each entry names the word the table's
headers, captions and ``retrieval_and_answering.png`` use for it ("accuracy", "F1"): they read it here.

**The gap between two pipelines, split.**  With ``s`` the share, ``a`` the accuracy given the
evidence and ``o`` given none, a pipeline's accuracy is ``acc = o + s·g`` with ``g = a - o``.  For
pipelines A and B on the same probes the identity ``Δ(s·g) = ḡ·Δs + s̄·Δg`` (bars: the two
pipelines' mean) splits the gap exactly and symmetrically (A and B swapped, each part changes sign):

    Δacc = ḡ·Δs  +  (s̄·Δa + (1 - s̄)·Δo)
           retrieval   answering

*Retrieval* is what the change in the share is worth at the pipelines' mean benefit of having the
evidence; *answering* is the change in accuracy at a fixed share (a pipeline that never had the
evidence in context takes the other's ``a``, which its accuracy does not depend on).  Each pipeline
is compared with the most accurate one that is not a ceiling (``recall.ceiling_names``: their distance
has a section of its own, ``_ceiling_report``), paired on the probes both answered, with cluster-bootstrap
CIs of the gap and of both parts (the conversations resampled, the split recomputed each time).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np
import pandas as pd

from lyra_lab.measures import EVIDENCE_IN_CONTEXT
from lyra_lab.reports._contenders import ceiling_words
from lyra_lab.reports._sections import TableSection
from lyra_lab.stats import BootstrapCI, cluster_bootstrap_ci, row_pipeline_labels



@dataclass(frozen=True)
class Accuracy:
    """What the split's "accuracy" is: a measure, the word its headers and figure use, what it is."""

    metric: str
    name: str
    what: str


#: What "accuracy" is, first present wins: an LLM judge's verdict, else token F1 (named F1, not accuracy).
ACCURACY: tuple[Accuracy, ...] = (
    Accuracy("judge", "accuracy", "the judge's verdict, several judges averaged"),
    Accuracy("qa_f1", "F1", "token F1 of the answer against the gold answer"),
)
TITLE = "Retrieval and answering apart"


def accuracy_of(metrics: Iterable[str]) -> Accuracy | None:
    """The first of ``ACCURACY`` among ``metrics`` (None: neither)."""
    present = set(metrics)
    return next((a for a in ACCURACY if a.metric in present), None)


def headers(name: str) -> tuple[list[str], list[str]]:
    """The split table's header and the gap table's, with the accuracy's word (``Accuracy.name``)."""
    return (["pipeline", "n", "evidence in context", f"{name}, evidence in", "n in", f"{name}, evidence not in",
             "n not in"], ["pipeline", "vs", "n", f"Δ {name}", "from retrieval", "from answering"])


@dataclass(frozen=True)
class PipelineSplit:
    """One pipeline's split: the share with the evidence in context and the accuracy either way."""

    pipeline: str
    share: BootstrapCI
    accuracy_in: BootstrapCI
    accuracy_out: BootstrapCI


@dataclass(frozen=True)
class GapSplit:
    """``b``'s accuracy minus ``a``'s on the probes both answered, and its retrieval and answering parts."""

    a: str
    b: str
    n: int
    gap: BootstrapCI
    retrieval: BootstrapCI
    answering: BootstrapCI


@dataclass
class SplitSection(TableSection):
    """The section, with the figures behind its tables."""

    splits: list[PipelineSplit] = field(default_factory=list)
    gaps: list[GapSplit] = field(default_factory=list)
    metric: str = ""  # what accuracy is (``ACCURACY``)
    name: str = "accuracy"  # the word the table and the figure use for it (``Accuracy.name``)
    unit: str = "whole conversations"  # what the CIs resample (``resampling_units``)


def resampling_units(conversations: pd.Series, probes: pd.Series) -> tuple[list[str], str]:
    """The bootstrap's unit per row and its name: the conversation, or the probe when there is one conversation."""
    conv = conversations.astype(str)
    if conv.nunique() > 1:
        return conv.tolist(), "whole conversations"
    return (conv + "\x1f" + probes.astype(str)).tolist(), "probes (all from one conversation)"


def probe_table(df: pd.DataFrame) -> tuple[pd.DataFrame, str] | None:
    """Per pipeline label × probe (× seed): ``evidence`` (0/1) and ``accuracy``; None without such rows.

    Returns the table (columns ``label``, ``conversation_id``, ``probe_id``, ``seed``, ``evidence``,
    ``accuracy``) and the accuracy's metric name.
    """
    if "metric" not in df.columns or EVIDENCE_IN_CONTEXT not in set(df["metric"]):
        return None
    found = accuracy_of(df["metric"])
    if found is None:
        return None
    metric = found.metric
    df = df.reset_index(drop=True)
    rows = df[df["metric"].isin([EVIDENCE_IN_CONTEXT, metric]) & (df["probe_id"].astype(str) != "")]
    key = ["label", "conversation_id", "probe_id", "seed"]
    frame = pd.DataFrame({"label": row_pipeline_labels(df).loc[rows.index],
                          "conversation_id": rows["conversation_id"].astype(str), "probe_id": rows["probe_id"].astype(str),
                          "seed": rows["seed"] if "seed" in rows.columns else 0,
                          "metric": rows["metric"], "value": rows["value"].astype(float)}).dropna(subset=["value"])
    wide = frame.pivot_table(index=key, columns="metric", values="value", aggfunc="mean")  # judges: their mean
    if EVIDENCE_IN_CONTEXT not in wide.columns or metric not in wide.columns:
        return None
    wide = wide.dropna(subset=[EVIDENCE_IN_CONTEXT, metric]).reset_index()
    return wide.rename(columns={EVIDENCE_IN_CONTEXT: "evidence", metric: "accuracy"})[key + ["evidence", "accuracy"]], metric


def split_by_pipeline(table: pd.DataFrame, n_resamples: int = 1000, seed: int = 0) -> list[PipelineSplit]:
    """Each pipeline's ``PipelineSplit`` (CIs resample whole conversations)."""
    out = []
    units = pd.Series(resampling_units(table["conversation_id"], table["probe_id"])[0], index=table.index)
    for label, rows in table.groupby("label", sort=True):
        held = rows["evidence"] >= 0.5
        def ci(values: pd.Series) -> BootstrapCI:
            return cluster_bootstrap_ci(values.to_numpy(float), units.loc[values.index].tolist(), n_resamples,
                                        seed=seed)
        out.append(PipelineSplit(str(label), ci(held.astype(float)), ci(rows.loc[held, "accuracy"]),
                                 ci(rows.loc[~held, "accuracy"])))
    return out


def _parts(ev_a: np.ndarray, acc_a: np.ndarray, ev_b: np.ndarray, acc_b: np.ndarray) -> tuple[float, float, float]:
    """(gap, retrieval, answering) of B against A over paired rows (see the module docstring)."""
    def figures(ev: np.ndarray, acc: np.ndarray) -> tuple[float, float, float]:
        held = ev >= 0.5
        share = float(held.mean())
        a = float(acc[held].mean()) if held.any() else math.nan
        o = float(acc[~held].mean()) if (~held).any() else math.nan
        return share, a, o
    s_a, a_a, o_a = figures(ev_a, acc_a)
    s_b, a_b, o_b = figures(ev_b, acc_b)
    # an empty group's accuracy does not enter its pipeline's accuracy: take the other's (0 if neither has one)
    a_a, a_b = (a_b if math.isnan(a_a) else a_a), (a_a if math.isnan(a_b) else a_b)
    o_a, o_b = (o_b if math.isnan(o_a) else o_a), (o_a if math.isnan(o_b) else o_b)
    a_a, a_b, o_a, o_b = (0.0 if math.isnan(x) else x for x in (a_a, a_b, o_a, o_b))
    s_mean, g_mean = (s_a + s_b) / 2, ((a_a - o_a) + (a_b - o_b)) / 2
    retrieval = g_mean * (s_b - s_a)
    answering = s_mean * (a_b - a_a) + (1 - s_mean) * (o_b - o_a)
    return float(acc_b.mean() - acc_a.mean()), retrieval, answering


def gap_split(table: pd.DataFrame, a: str, b: str, n_resamples: int = 1000, seed: int = 0) -> GapSplit | None:
    """``b`` against ``a`` on the probes (and seeds) both answered; None when they share none."""
    key = ["conversation_id", "probe_id", "seed"]
    paired = table[table["label"] == a].merge(table[table["label"] == b], on=key, suffixes=("_a", "_b"))
    if paired.empty:
        return None
    cols = [paired[c].to_numpy(float) for c in ("evidence_a", "accuracy_a", "evidence_b", "accuracy_b")]
    point = _parts(*cols)
    one = table["conversation_id"].astype(str).nunique() <= 1  # one conversation: its probes are the units
    clusters = pd.factorize(paired["probe_id"] if one else paired["conversation_id"], sort=True)[0]
    members = [np.flatnonzero(clusters == c) for c in range(clusters.max() + 1)]
    rng = np.random.default_rng(seed)
    draws = []
    if len(members) > 1:
        for _ in range(n_resamples):
            idx = np.concatenate([members[c] for c in rng.integers(0, len(members), len(members))])
            draws.append(_parts(*(c[idx] for c in cols)))
    n = len(paired)
    cis = []
    for i in range(3):
        low, high = (np.percentile([d[i] for d in draws], [2.5, 97.5]) if draws else (point[i], point[i]))
        cis.append(BootstrapCI(point[i], float(low), float(high), n))
    return GapSplit(a, b, n, *cis)


def _fmt(ci: BootstrapCI, signed: bool = False) -> str:
    if ci.n == 0 or math.isnan(ci.mean):
        return "—"
    sign = "+" if signed else ""
    mean, low, high = (round(x, 3) + 0.0 for x in (ci.mean, ci.low, ci.high))  # + 0.0: never "-0.000"
    return f"{mean:{sign}.3f} [{low:{sign}.3f}, {high:{sign}.3f}]"


def split_section(df: pd.DataFrame, n_resamples: int = 1000, seed: int = 0) -> SplitSection | None:
    """The section for a run's rows; None when no answered probe has an ``evidence_in_context`` row."""
    found = probe_table(df)
    if found is None:
        return None
    table, metric = found
    accuracy = accuracy_of([metric])
    assert accuracy is not None, "probe_table returns one of ACCURACY"
    name = accuracy.name
    scorers = sorted(str(s) for s in df["qa.scorer"].dropna().unique()) if "qa.scorer" in df.columns else []
    what = accuracy.what + (f" (QA scorer: {', '.join(scorers)})" if metric == "qa_f1" and scorers else "")
    splits = split_by_pipeline(table, n_resamples, seed)
    unit = resampling_units(table["conversation_id"], table["probe_id"])[1]
    overall = table.groupby("label")["accuracy"].mean().sort_values(ascending=False, kind="stable")
    contenders = [str(label) for label in overall.index if str(label) not in _ceiling_labels(df)]
    best = contenders[0] if contenders else ""
    gaps = [g for label in contenders[1:] if (g := gap_split(table, best, label, n_resamples, seed))]
    notes = [f"Per pipeline, its answered probes with evidence: the share whose every evidence turn was held "
             f"verbatim by a hit shown whole in the context the answerer was given (`{EVIDENCE_IN_CONTEXT}`), "
             f"and the {name} (`{metric}`: {what}) of those probes and of the rest: mean [95% bootstrap CI, "
             f"resampling {unit}], n probes.",
             f"The gap in {name} to the best pipeline that is not a ceiling, paired on the probes both answered, split exactly into "
             f"retrieval (ḡ·Δs: the change in the share at the mean benefit g = {name}|in − {name}|not in) and "
             f"answering (s̄·Δ{name}|in + (1 − s̄)·Δ{name}|not in: the change in {name} at the mean share)."]
    words = ceiling_words(df)
    if words:  # what their share of evidence in context was measured on
        notes.append(f"The ceilings (in the table, never in the gaps): {words}")
    header, gap_header = headers(name)
    rows = [[s.pipeline, str(s.share.n), _fmt(s.share), _fmt(s.accuracy_in), str(s.accuracy_in.n),
             _fmt(s.accuracy_out), str(s.accuracy_out.n)] for s in splits]
    tables = [(f"Evidence in context and {name} (`{metric}`) given it", header, rows)]
    if gaps:
        tables.append((f"Gap in {name} (`{metric}`) to {best}, from retrieval and from answering", gap_header,
                       [[g.b, g.a, str(g.n), _fmt(g.gap, True), _fmt(g.retrieval, True), _fmt(g.answering, True)]
                        for g in gaps]))
    return SplitSection(TITLE, "split", notes, tables, splits=splits, gaps=gaps, metric=metric, name=name,
                        unit=unit)


def _ceiling_labels(df: pd.DataFrame) -> set[str]:
    """The pipeline labels of ``df`` whose recaller is a ceiling (``_contenders.ceiling_rows``)."""
    from lyra_lab.reports._contenders import ceiling_rows

    df = df.reset_index(drop=True)
    return set(row_pipeline_labels(df)[ceiling_rows(df)].astype(str))
