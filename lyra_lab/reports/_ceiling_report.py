"""The report's "Distance to the ceilings" section: each pipeline's accuracy against ``oracle`` and ``full_context``.

A grid that lists the ceilings among its recallers (``recallers = ["bm25", "oracle", "full_context"]``)
asks them of the same memory, in the same cells, as every other recaller.  Per pipeline this section
gives its accuracy (the judge's verdict when judged, else ``qa_f1``: ``reports._split.ACCURACY``) and
how far each ceiling of the same memory is above it: the mean paired difference (ceiling minus
pipeline) over the probes both answered, with a 95% CI resampling whole conversations, and n.
``oracle`` is the answerer's ceiling given perfect retrieval, in the pipelines' context budget;
``full_context`` the long-context baseline: the whole history up to the answerer's window (its
context budget is the room that window leaves, ``measures.AnswerRoom``; the newest kept when the
history does not fit).  The note says the budgets the run's rows carry (``_contenders.ceiling_words``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from lyra_lab.recall import ceiling_names
from lyra_lab.reports._contenders import ceiling_words
from lyra_lab.reports._sections import TableSection
from lyra_lab.reports._split import accuracy_of, resampling_units
from lyra_lab.stats import BootstrapCI, cluster_bootstrap_ci, row_pipeline_labels

TITLE = "Distance to the ceilings"
_KEY = ["conversation_id", "probe_id", "seed"]


@dataclass(frozen=True)
class CeilingDistance:
    """How far ``ceiling`` (of the same memory) is above ``pipeline``: paired, ceiling minus pipeline."""

    pipeline: str
    ceiling: str
    distance: BootstrapCI


@dataclass
class CeilingSection(TableSection):
    """The section, with the distances behind its table (the split figure draws them)."""

    distances: list[CeilingDistance] = field(default_factory=list)


def _accuracy(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """``label``, probe key, ``accuracy`` (several judges: their mean), ``recaller`` and ``cell_id`` per row."""
    df = df.reset_index(drop=True)
    rows = df[(df["metric"] == metric) & (df["probe_id"].astype(str) != "")].dropna(subset=["value"])
    frame = pd.DataFrame({"label": row_pipeline_labels(df).loc[rows.index],
                          "conversation_id": rows["conversation_id"].astype(str),
                          "probe_id": rows["probe_id"].astype(str),
                          "seed": rows["seed"] if "seed" in rows.columns else 0,
                          "recaller": rows["recaller"].astype(str), "cell_id": rows["cell_id"].astype(str),
                          "accuracy": rows["value"].astype(float)})
    return frame.groupby(["label", *_KEY, "recaller", "cell_id"], as_index=False)["accuracy"].mean()


def _distance(table: pd.DataFrame, label: str, ceiling: str, n_resamples: int, seed: int) -> BootstrapCI:
    paired = table[table["label"] == label].merge(table[table["label"] == ceiling], on=_KEY, suffixes=("", "_c"))
    units = (resampling_units(paired["conversation_id"], paired["probe_id"])[0]
             if table["conversation_id"].nunique() <= 1 else paired["conversation_id"].tolist())
    return cluster_bootstrap_ci((paired["accuracy_c"] - paired["accuracy"]).to_numpy(float), units, n_resamples,
                                seed=seed)


def _fmt(ci: BootstrapCI) -> str:
    if ci.n == 0:
        return "—"
    mean, low, high = (round(x, 3) + 0.0 for x in (ci.mean, ci.low, ci.high))  # + 0.0: never "-0.000"
    return f"{mean:+.3f} [{low:+.3f}, {high:+.3f}] (n={ci.n})"


def ceiling_section(df: pd.DataFrame, n_resamples: int = 1000, seed: int = 0) -> CeilingSection | None:
    """The section; None unless the run answered probes under a ceiling recaller and another one."""
    if not {"metric", "recaller", "cell_id", "probe_id"} <= set(df.columns):
        return None
    accuracy = accuracy_of(df["metric"])
    ceilings = ceiling_names()
    if accuracy is None or not df["recaller"].astype(str).isin(ceilings).any():
        return None
    metric, word = accuracy.metric, accuracy.name
    table = _accuracy(df, metric)
    unit = resampling_units(table["conversation_id"], table["probe_id"])[1]
    cells = table.groupby("label")["cell_id"].agg(frozenset)
    recaller = table.groupby("label")["recaller"].first()
    names = [c for c in ceilings if c in set(recaller)]
    rows, distances = [], []
    for label in sorted(recaller.index[~recaller.isin(ceilings)]):
        mean = table.loc[table["label"] == label, "accuracy"].mean()
        found = {recaller[c]: c for c in recaller.index if recaller[c] in names and cells[c] == cells[label]}
        if not found:
            continue
        mine = {name: _distance(table, label, found[name], n_resamples, seed) for name in names if name in found}
        distances += [CeilingDistance(str(label), name, ci) for name, ci in mine.items()]
        rows.append([str(label), f"{mean:.3f}"] + [_fmt(mine[name]) if name in mine else "—" for name in names])
    if not rows:
        return None
    notes = [f"Per pipeline, its {word} (`{metric}`) and how far each ceiling of the same memory (the same cells) is "
             "above it: mean of the paired difference, ceiling minus pipeline, over the probes both answered "
             f"[95% bootstrap CI, resampling {unit}] (n). {ceiling_words(df)}"]
    header = ["pipeline", f"{word} ({metric})"] + [f"to {c}" for c in names]
    return CeilingSection(TITLE, "ceilings", notes, [(f"{word} (`{metric}`): distance to the ceilings", header, rows)],
                          distances=distances)
