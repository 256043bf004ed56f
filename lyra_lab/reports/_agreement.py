"""How much a finding depends on the judge: each judge's J, agreement between judges, and with exact match.

A run with ``[qa] judges`` has one ``judge`` row per probe × pipeline × judge, the
judge named in the ``judge`` column.  Verdicts are compared **paired**: two judges
(or a judge and exact match, ``qa_em``) are compared only on the answers both graded.

* ``judge_agreement(df)``: one row per pair of raters — every two judges, and every
  judge against ``exact_match`` — with n, each side's mean (J; EM for exact match),
  raw agreement and Cohen's kappa (agreement corrected for chance:
  ``(p_o - p_e) / (1 - p_e)``, ``p_e`` from each rater's own rate of 1s; NaN when both
  raters give one constant verdict, where chance agreement is already 1).
* ``judge_table(df)``: J per pipeline under each judge, with exact match beside it,
  the spread (max - min J across judges) and each judge's ranking of the pipelines,
  so a reader sees whether the judge changes which pipeline wins.
"""

from __future__ import annotations

from itertools import combinations
from typing import Sequence

import numpy as np
import pandas as pd

EXACT_MATCH = "exact_match"
KEYS = ("cell_id", "pipeline", "conversation_id", "probe_id")
_UNNAMED = "judge"  # rows from a run before the judge column existed


def cohen_kappa(a: Sequence[float], b: Sequence[float]) -> float:
    """Cohen's kappa of two raters' labels on the same items (any hashable labels, here 0/1).

    >>> cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0])
    0.5
    """
    x, y = np.asarray(a), np.asarray(b)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"two raters need equally long 1-d label lists, got {x.shape} and {y.shape}")
    if x.size == 0:
        return float("nan")
    labels = np.union1d(x, y)
    p_o = float(np.mean(x == y))
    p_e = float(sum(np.mean(x == label) * np.mean(y == label) for label in labels))
    if np.isclose(p_e, 1.0):
        return float("nan")
    return (p_o - p_e) / (1.0 - p_e)


def verdicts_wide(df: pd.DataFrame) -> pd.DataFrame:
    """One row per graded answer (``KEYS``), one column per judge, plus ``exact_match`` (from ``qa_em``)."""
    keys = [k for k in KEYS if k in df.columns]
    judged = df[df["metric"] == "judge"].copy()
    if judged.empty:
        raise ValueError("no judge rows: run with [qa] enabled and [qa] judges listed")
    names = judged["judge"] if "judge" in judged.columns else pd.Series(_UNNAMED, index=judged.index)
    judged["rater"] = names.where(names.notna() & (names.astype(str) != ""), _UNNAMED).astype(str)
    wide = judged.pivot_table(index=keys, columns="rater", values="value", aggfunc="first")
    em = df[df["metric"] == "qa_em"].drop_duplicates(keys).set_index(keys)["value"].rename(EXACT_MATCH)
    wide = wide.join(em, how="left")
    wide.columns.name = None
    return wide


def judge_agreement(df: pd.DataFrame) -> pd.DataFrame:
    """Every pair of raters (judge × judge, judge × exact match): n, means, agreement, kappa.

    Columns: ``rater``, ``other``, ``n`` (answers both graded), ``rater_mean``
    (the judge's J on those answers), ``other_mean``, ``agreement`` (share of equal
    verdicts), ``kappa`` (Cohen's).
    """
    wide = verdicts_wide(df)
    judges = [c for c in wide.columns if c != EXACT_MATCH]
    pairs = list(combinations(judges, 2))
    if wide[EXACT_MATCH].notna().any():
        pairs += [(j, EXACT_MATCH) for j in judges]
    records = []
    for a, b in pairs:
        both = wide[[a, b]].dropna()
        x, y = both[a].to_numpy(), both[b].to_numpy()
        records.append({"rater": a, "other": b, "n": len(both),
                        "rater_mean": float(x.mean()) if len(x) else float("nan"),
                        "other_mean": float(y.mean()) if len(y) else float("nan"),
                        "agreement": float(np.mean(x == y)) if len(x) else float("nan"),
                        "kappa": cohen_kappa(x, y)})
    return pd.DataFrame.from_records(records, columns=["rater", "other", "n", "rater_mean", "other_mean",
                                                       "agreement", "kappa"])


def judge_table(df: pd.DataFrame) -> pd.DataFrame:
    """J per pipeline under each judge (columns named by judge), exact match, spread, and ranks.

    Columns: ``pipeline``, ``n`` (answers per pipeline graded by every judge), one column
    per judge (its J over those answers), ``exact_match``, ``spread`` (max - min J across
    judges), and ``rank:<judge>`` (1 = the pipeline that judge scores highest).
    """
    wide = verdicts_wide(df)
    judges = [c for c in wide.columns if c != EXACT_MATCH]
    complete = wide.dropna(subset=judges).reset_index()
    grouped = complete.groupby("pipeline", sort=True)
    out = grouped[judges + [EXACT_MATCH]].mean()
    out.insert(0, "n", grouped.size())
    out["spread"] = out[judges].max(axis=1) - out[judges].min(axis=1)
    for j in judges:
        out[f"rank:{j}"] = out[j].rank(ascending=False, method="min").astype(int)
    return out.reset_index()


def split_judges(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with each judge's verdicts under a metric of its own, ``judge[<name>]``, when there are several.

    A per-pipeline summary groups by metric; under one metric name ``judge``, several
    judges' verdicts would be pooled (and n counted once per judge).  With one judge
    (or none) ``df`` is returned unchanged.
    """
    if "judge" not in df.columns:
        return df
    is_judge = df["metric"] == "judge"
    names = df.loc[is_judge, "judge"].dropna().astype(str)
    if names.nunique() < 2:
        return df
    out = df.copy()
    out.loc[is_judge, "metric"] = "judge[" + out.loc[is_judge, "judge"].fillna(_UNNAMED).astype(str) + "]"
    return out
