"""Percentile-bootstrap confidence intervals and the per-group aggregate table.

``bootstrap_ci`` resamples the values with replacement ``n_resamples`` times
(numpy ``default_rng(seed)``, so results are reproducible), takes each
resample's mean and reports the ``(1-confidence)/2`` and ``(1+confidence)/2``
percentiles of those means.  NaN values are dropped first (``n`` counts what
was kept).  With one value the interval is that value; with none, all NaN.

The resampling unit is the row: a probe for probe metrics, a conversation for
conversation-level ones.  Probes of one conversation are not independent, so
intervals over many probes of few conversations (LoCoMo: 10) are optimistic;
``aggregate(..., cluster="conversation_id")`` resamples whole conversations
instead (the cluster bootstrap) when that matters.

Seeds are not independent probes: ``aggregate`` first averages each probe's
(or, for conversation-level rows, each conversation's) values over the seeds it
ran under, so a run with 3 seeds has the same ``n`` as one with a single seed.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass
from typing import Iterable, NamedTuple, Sequence, TypedDict, Unpack

import numpy as np
import pandas as pd

#: The columns that name a pipeline's results in a tidy frame (those present are used).  ``answer_prompt``
#: is set on QA rows only, in runs that ask several answer prompts (``[qa] prompts``).
GROUP_COLUMNS: tuple[str, ...] = ("pipeline", "backend", "embedder", "answer_prompt")
#: Levels nested inside a probe: a probe's values under several seeds or answer repeats (``[qa] repeats``)
#: are averaged within it, never counted as more probes.
NESTED_LEVELS: tuple[str, ...] = ("seed", "repeat")


def group_columns(df: pd.DataFrame) -> list[str]:
    """The ``GROUP_COLUMNS`` present in ``df``."""
    return [c for c in GROUP_COLUMNS if c in df.columns]

# Resample in blocks so a large n never allocates an n_resamples × n index matrix at once.
_MAX_CELLS = 4_000_000


class BootstrapCI(NamedTuple):
    """A mean and its bootstrap interval over ``n`` values."""

    mean: float
    low: float
    high: float
    n: int


def _check(n_resamples: int, confidence: float) -> None:
    if not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


def _resampled_means(data: np.ndarray, weights: np.ndarray | None, n_resamples: int,
                     rng: np.random.Generator) -> np.ndarray:
    n = len(data)
    block = max(1, _MAX_CELLS // n)
    means = []
    for start in range(0, n_resamples, block):
        idx = rng.integers(0, n, size=(min(block, n_resamples - start), n))
        if weights is None:
            means.append(data[idx].mean(axis=1))
        else:  # cluster bootstrap: data are cluster sums, weights cluster sizes
            means.append(data[idx].sum(axis=1) / weights[idx].sum(axis=1))
    return np.concatenate(means)


def bootstrap_ci(
    values: Iterable[float], n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> BootstrapCI:
    """Mean of ``values`` with a percentile-bootstrap interval (see the module docstring)."""
    _check(n_resamples, confidence)
    data = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=float).ravel()
    data = data[~np.isnan(data)]
    n = len(data)
    if n == 0:
        return BootstrapCI(float("nan"), float("nan"), float("nan"), 0)
    mean = float(data.mean())
    if n == 1:
        return BootstrapCI(mean, mean, mean, 1)
    means = _resampled_means(data, None, n_resamples, np.random.default_rng(seed))
    low, high = np.percentile(means, [50 * (1 - confidence), 50 * (1 + confidence)])
    return BootstrapCI(mean, float(low), float(high), n)


def cluster_bootstrap_ci(
    values: Sequence[float], clusters: Sequence[object], n_resamples: int = 1000,
    confidence: float = 0.95, seed: int = 0,
) -> BootstrapCI:
    """Like ``bootstrap_ci`` but resampling whole clusters (e.g. conversations); ``n`` counts values."""
    _check(n_resamples, confidence)
    frame = pd.DataFrame({"v": np.asarray(values, dtype=float), "c": list(clusters)}).dropna(subset=["v"])
    if frame.empty:
        return BootstrapCI(float("nan"), float("nan"), float("nan"), 0)
    grouped = frame.groupby("c", sort=True)["v"].agg(["sum", "count"])
    mean = float(frame["v"].mean())
    if len(grouped) == 1:
        return BootstrapCI(mean, mean, mean, len(frame))
    means = _resampled_means(grouped["sum"].to_numpy(float), grouped["count"].to_numpy(float),
                             n_resamples, np.random.default_rng(seed))
    low, high = np.percentile(means, [50 * (1 - confidence), 50 * (1 + confidence)])
    return BootstrapCI(mean, float(low), float(high), len(frame))


def average_seeds(df: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """``df`` with one ``value`` per ``keys`` + probe (``conversation_id``, ``probe_id``): the mean over seeds.

    And over answer repeats (``NESTED_LEVELS``).  Unchanged when no such level varies (a level among
    ``keys`` asks for figures per seed or repeat) or there is no probe column to average within.
    """
    unit = [c for c in ("conversation_id", "probe_id") if c in df.columns and c not in keys]
    varies = [c for c in NESTED_LEVELS if c in df.columns and c not in keys and df[c].nunique() > 1]
    if not varies or not unit:
        return df
    return df.groupby(list(dict.fromkeys([*keys, *unit])), sort=False, dropna=False)["value"].mean().reset_index()


@dataclass(frozen=True)
class Resampling:
    """How a bootstrap interval is drawn.

    Attributes:
        n_resamples: bootstrap resamples.
        confidence: the interval's coverage, e.g. 0.95.
        seed: of the resampling.
    """

    n_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0


class ResamplingOptions(TypedDict, total=False):
    """The fields of ``Resampling`` as keywords, each optional."""

    n_resamples: int
    confidence: float
    seed: int


def aggregate(
    df: pd.DataFrame,
    by: Sequence[str] = ("pipeline",),
    *,
    cluster: str | None = None,
    **resampling: Unpack[ResamplingOptions],
) -> pd.DataFrame:
    """Mean and CI of ``value`` for every group of ``by`` + ``metric``.

    Returns one row per group with the ``by`` columns, ``metric``, ``mean``,
    ``ci_low``, ``ci_high`` and ``n``.  ``cluster`` names a column whose
    values are resampled as units (e.g. ``"conversation_id"``); ``resampling``
    are ``Resampling``'s fields (``n_resamples``, ``confidence``, ``seed``).
    """
    n_resamples, confidence, seed = astuple(Resampling(**resampling))
    keys = list(by) + ([] if "metric" in by else ["metric"])
    missing = [c for c in keys + ["value"] + ([cluster] if cluster else []) if c not in df.columns]
    if missing:
        raise KeyError(f"results frame has no column(s) {missing}; it has {list(df.columns)}")
    df = average_seeds(df, keys + ([cluster] if cluster else []))
    rows = []
    for group, part in df.groupby(keys, sort=True, dropna=False):
        group = group if isinstance(group, tuple) else (group,)
        if cluster:
            ci = cluster_bootstrap_ci(part["value"].to_numpy(float), part[cluster].tolist(),
                                      n_resamples, confidence, seed)
        else:
            ci = bootstrap_ci(part["value"].to_numpy(float), n_resamples, confidence, seed)
        rows.append({**dict(zip(keys, group)), "mean": ci.mean, "ci_low": ci.low, "ci_high": ci.high, "n": ci.n})
    return pd.DataFrame(rows, columns=keys + ["mean", "ci_low", "ci_high", "n"])
