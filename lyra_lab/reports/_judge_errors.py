"""How often each judge is wrong, measured on its controls, beside every judged accuracy.

A run's judges grade, beside the real answers, controls of known truth (``judge_tpr`` rows:
the gold itself; ``judge_fpr`` rows: wrong but on-topic answers built from the conversation;
see ``lyra_lab.measures.judge_controls``).  Here:

* ``wilson_interval(k, n)``: a proportion with its Wilson score interval (the interval used for
  every rate of this section; it stays inside [0, 1] and is sound for small n and rates near 0 or 1);
* ``judge_error_rates(df)``: per judge, its true-positive rate (TPR: share of the gold controls it
  accepts) and false-positive rate (FPR: share of the wrong controls it accepts), each with n and
  its Wilson interval; a control graded in several cells (same conversation, other pipelines or
  seeds) counts once;
* ``corrected_accuracy(...)``: the Rogan–Gladen estimate of the true accuracy behind a judged one,
  ``(J - FPR) / (TPR - FPR)`` clipped to [0, 1] (NaN when TPR <= FPR: the judge tells nothing), with
  a parametric-bootstrap interval (J, TPR and FPR redrawn as binomials, 2000 draws, seed 0);
* ``judged_accuracy(df)``: per pipeline and judge, J with its interval and the judge's TPR and FPR
  beside it, and the corrected accuracy for the judges whose ``corrected`` option is set.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
import pandas as pd

#: What the intervals of this section are, for captions.
WILSON = "95% Wilson score interval"
ROGAN_GLADEN = "Rogan–Gladen correction (J − FPR)/(TPR − FPR), clipped to [0, 1]; 95% parametric bootstrap interval"
CONTROL_KEYS = ("judge", "conversation_id", "probe_id", "judge_control")


class Proportion(NamedTuple):
    """``k`` of ``n`` as a rate with its interval (all NaN when ``n`` is 0)."""

    rate: float
    low: float
    high: float
    n: int


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> Proportion:
    """``k`` successes of ``n`` with the Wilson score interval.

    >>> tuple(round(x, 3) for x in wilson_interval(3, 10)[:3])
    (0.3, 0.108, 0.603)
    """
    if n <= 0:
        return Proportion(float("nan"), float("nan"), float("nan"), 0)
    k, n = int(k), int(n)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return Proportion(p, max(0.0, centre - half), min(1.0, centre + half), n)


def _controls(df: pd.DataFrame) -> pd.DataFrame:
    """The control rows, each control counted once per judge (the first row of it)."""
    rows = df[df["metric"].isin(["judge_tpr", "judge_fpr"])].dropna(subset=["value"])
    keys = [k for k in CONTROL_KEYS if k in rows.columns] + ["metric"]
    return rows.drop_duplicates(keys)


def judge_error_rates(df: pd.DataFrame) -> pd.DataFrame:
    """Per judge: ``tpr``/``fpr`` with ``_low``/``_high`` (Wilson) and ``_n``, and ``corrected`` (asked for).

    Empty (with those columns) when the run has no control rows.
    """
    columns = ["judge", "judge_prompt", "tpr", "tpr_low", "tpr_high", "tpr_n", "fpr", "fpr_low", "fpr_high",
               "fpr_n", "corrected"]
    if "judge" not in df.columns:
        return pd.DataFrame(columns=columns)
    rows = _controls(df)
    records = []
    for judge, part in rows.groupby("judge", sort=True):
        record: dict[str, object] = {"judge": str(judge)}
        prompts = part["judge_prompt"].dropna().astype(str).unique() if "judge_prompt" in part.columns else []
        record["judge_prompt"] = prompts[0] if len(prompts) else ""
        for rate, metric in (("tpr", "judge_tpr"), ("fpr", "judge_fpr")):
            values = part.loc[part["metric"] == metric, "value"].to_numpy(float)
            p = wilson_interval(int(values.sum()), len(values))
            record.update({rate: p.rate, f"{rate}_low": p.low, f"{rate}_high": p.high, f"{rate}_n": p.n})
        record["corrected"] = bool(part["judge.corrected"].fillna(False).astype(bool).any()) \
            if "judge.corrected" in part.columns else False
        records.append(record)
    return pd.DataFrame.from_records(records, columns=columns)


def error_rates_by_kind(df: pd.DataFrame) -> pd.DataFrame:
    """Per judge and control kind: ``n`` and the share accepted (``accepted``, Wilson ``low``/``high``)."""
    columns = ["judge", "judge_control", "truth", "n", "accepted", "low", "high"]
    if "judge_control" not in df.columns:
        return pd.DataFrame(columns=columns)
    records = []
    for (judge, kind, metric), part in _controls(df).groupby(["judge", "judge_control", "metric"], sort=True):
        values = part["value"].to_numpy(float)
        p = wilson_interval(int(values.sum()), len(values))
        records.append({"judge": judge, "judge_control": kind, "truth": "correct" if metric == "judge_tpr" else "wrong",
                        "n": p.n, "accepted": p.rate, "low": p.low, "high": p.high})
    return pd.DataFrame.from_records(records, columns=columns)


class Corrected(NamedTuple):
    """A Rogan–Gladen corrected accuracy and its interval."""

    value: float
    low: float
    high: float


def rogan_gladen(j: float, tpr: float, fpr: float) -> float:
    """``(j - fpr) / (tpr - fpr)`` clipped to [0, 1]; NaN when ``tpr <= fpr``.

    >>> rogan_gladen(0.5, 0.9, 0.3)
    0.3333333333333333
    """
    if not tpr > fpr:
        return float("nan")
    return float(min(1.0, max(0.0, (j - fpr) / (tpr - fpr))))


def corrected_accuracy(judged: Proportion, tpr: Proportion, fpr: Proportion, draws: int = 2000,
                       seed: int = 0) -> Corrected:
    """The Rogan–Gladen corrected accuracy with a parametric-bootstrap 95% interval (see the module)."""
    if min(judged.n, tpr.n, fpr.n) == 0:
        return Corrected(float("nan"), float("nan"), float("nan"))
    value = rogan_gladen(judged.rate, tpr.rate, fpr.rate)
    rng = np.random.default_rng(seed)
    j = rng.binomial(judged.n, judged.rate, draws) / judged.n
    t = rng.binomial(tpr.n, tpr.rate, draws) / tpr.n
    f = rng.binomial(fpr.n, fpr.rate, draws) / fpr.n
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(t > f, np.clip((j - f) / (t - f), 0.0, 1.0), np.nan)
    c = c[~np.isnan(c)]
    if len(c) < draws / 2:  # the judge's rates overlap too often for an interval to mean anything
        return Corrected(value, float("nan"), float("nan"))
    low, high = np.percentile(c, [2.5, 97.5])
    return Corrected(value, float(low), float(high))


def judged_accuracy(df: pd.DataFrame) -> pd.DataFrame:
    """Per pipeline and judge: J (Wilson), the judge's TPR and FPR beside it, and the corrected J when asked.

    Columns: ``pipeline``, ``judge``, ``n``, ``j``, ``j_low``, ``j_high``, the ``judge_error_rates``
    columns, and ``corrected_j``, ``corrected_low``, ``corrected_high`` (NaN unless the judge's
    ``corrected`` option is set).
    """
    rates = judge_error_rates(df).set_index("judge")
    judged = df[df["metric"] == "judge"].dropna(subset=["value"])
    if "judge" not in judged.columns:
        judged = judged.assign(judge="judge")
    records = []
    for (pipeline, judge), part in judged.groupby(["pipeline", "judge"], sort=True):
        values = part["value"].to_numpy(float)
        j = wilson_interval(int(values.sum()), len(values))
        record: dict[str, object] = {"pipeline": pipeline, "judge": judge, "n": j.n, "j": j.rate, "j_low": j.low,
                                     "j_high": j.high}
        corrected = Corrected(float("nan"), float("nan"), float("nan"))
        if judge in rates.index:
            r = rates.loc[judge]
            record.update({k: r[k] for k in rates.columns})
            if bool(r["corrected"]):
                corrected = corrected_accuracy(j, Proportion(r["tpr"], r["tpr_low"], r["tpr_high"], int(r["tpr_n"])),
                                               Proportion(r["fpr"], r["fpr_low"], r["fpr_high"], int(r["fpr_n"])))
        record.update({"corrected_j": corrected.value, "corrected_low": corrected.low,
                       "corrected_high": corrected.high})
        records.append(record)
    return pd.DataFrame.from_records(records)
