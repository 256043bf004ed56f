"""Score fusion over aligned score vectors: weighted min-max, weighted z-score, or RRF.

Each input is one score per candidate (the same candidates, in the same order);
the output is one fused score per candidate.  Normalizing before weighting puts a
cosine in [-1, 1] and an unbounded BM25 score on one scale; RRF instead uses only
ranks (Cormack et al. 2009), which throws the score gaps away.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

FUSIONS = ("minmax", "zscore", "rrf")


def normalize(scores: np.ndarray, method: str) -> np.ndarray:
    """Scores rescaled by ``method``: ``minmax`` to [0, 1], ``zscore`` to mean 0 / sd 1.

    A constant vector (no evidence either way) maps to all zeros under both.

    >>> normalize(np.array([1.0, 3.0, 2.0]), "minmax").tolist()
    [0.0, 1.0, 0.5]
    >>> normalize(np.array([1.0, 3.0, 2.0]), "zscore").round(4).tolist()
    [-1.2247, 1.2247, 0.0]
    """
    scores = np.asarray(scores, dtype=np.float64)
    if method not in ("minmax", "zscore"):
        raise ValueError(f"normalization must be 'minmax' or 'zscore', got {method!r}")
    if scores.size == 0:
        return scores
    if method == "minmax":
        lo, span = scores.min(), np.ptp(scores)
        return (scores - lo) / span if span > 0 else np.zeros_like(scores)
    sd = scores.std()
    return (scores - scores.mean()) / sd if sd > 0 else np.zeros_like(scores)


def rrf_scores(scores: np.ndarray, rrf_k: float = 60) -> np.ndarray:
    """``1 / (rrf_k + rank)`` with rank from 1 by descending score (ties: lower position first).

    >>> rrf_scores(np.array([0.2, 0.9, 0.5]), rrf_k=1).tolist()
    [0.25, 0.5, 0.3333333333333333]
    """
    scores = np.asarray(scores, dtype=np.float64)
    order = np.lexsort((np.arange(len(scores)), -scores))
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    return 1.0 / (rrf_k + ranks)


def fuse(score_lists: Sequence[np.ndarray], weights: Sequence[float], method: str = "minmax",
         rrf_k: float = 60) -> np.ndarray:
    """``sum_i weights[i] * norm(score_lists[i])``, ``norm`` being min-max, z-score or RRF.

    >>> fuse([np.array([0.0, 1.0]), np.array([4.0, 2.0])], [0.75, 0.25]).tolist()
    [0.25, 0.75]
    """
    if method not in FUSIONS:
        raise ValueError(f"fusion must be one of {FUSIONS}, got {method!r}")
    if len(score_lists) != len(weights) or not score_lists:
        raise ValueError(f"need one weight per score list, got {len(weights)} for {len(score_lists)}")
    n = len(score_lists[0])
    if any(len(s) != n for s in score_lists):
        raise ValueError("score lists to fuse must have equal lengths")
    total = np.zeros(n)
    for scores, weight in zip(score_lists, weights):
        if weight:
            total += weight * (rrf_scores(scores, rrf_k) if method == "rrf" else normalize(scores, method))
    return total
