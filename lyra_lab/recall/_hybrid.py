"""Hybrid recall: dense and BM25 candidate lists fused by reciprocal rank or weighted sum."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from itertools import islice
from operator import attrgetter
from typing import Sequence

from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall._base import RECALLERS, BaseRecaller, Scored, require_embedder
from lyra_lab.recall._bm25 import Bm25
from lyra_lab.recall._dense import Dense
from lyra_lab.recall._ranking import Ranking
from lyra_lab.recall._types import Query
from lyra_lab._params import param

METHODS = ("rrf", "weighted")


def rrf_fuse(rankings: Sequence[Sequence[str]], rrf_k: float = 60) -> dict[str, float]:
    """Reciprocal rank fusion: ``score(d) = sum over lists of 1 / (rrf_k + rank)``, rank from 1.

    >>> rrf_fuse([["a", "b"], ["b", "c"]], rrf_k=60)["b"] == 1 / 62 + 1 / 61
    True
    """
    fused: dict[str, float] = {}
    for ranking in rankings:
        for doc, term in zip(ranking, _rrf_terms(rrf_k, len(ranking))):
            fused[doc] = fused.get(doc, 0.0) + term
    return fused


@functools.lru_cache(maxsize=64)
def _rrf_terms(rrf_k: float, n: int) -> tuple[float, ...]:
    """``1 / (rrf_k + rank)`` for rank 1..n, worked out once per list length (hybrid fuses two lists per query)."""
    return tuple(1.0 / (rrf_k + rank) for rank in range(1, n + 1))


def minmax(scores: dict[str, float]) -> dict[str, float]:
    """Scale to [0, 1]; a list whose scores are all equal maps to 1 (all tie for best)."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi == lo:
        return {d: 1.0 for d in scores}
    return {d: (s - lo) / (hi - lo) for d, s in scores.items()}


def weighted_fuse(dense: dict[str, float], lexical: dict[str, float], weight: float) -> dict[str, float]:
    """``weight * minmax(dense) + (1 - weight) * minmax(bm25)``; absent from a list counts 0."""
    d, b = minmax(dense), minmax(lexical)
    return {doc: weight * d.get(doc, 0.0) + (1 - weight) * b.get(doc, 0.0) for doc in {**d, **b}}


@RECALLERS.register("hybrid")
@dataclass(frozen=True)
class Hybrid(BaseRecaller):
    """Fuse the top ``candidates`` of dense and of BM25.

    The fused candidates come first; a ranking read deeper than they reach goes on with the
    other entries fused over the complete lists.  So the ranking does not depend on how deep
    it is read: the timed top-k and a measure reading 100 deep see the same first k.

    Args:
        method: ``"rrf"`` (reciprocal rank fusion) or ``"weighted"`` (min-max
            normalized scores, ``weight`` on dense and ``1 - weight`` on BM25).
        rrf_k: the RRF damping constant (60 in Cormack et al. 2009).
        weight: the dense share in the weighted method, in [0, 1].
        candidates: how many hits each list contributes to the fusion.
    """

    method: str = param("rrf", choices=METHODS)
    rrf_k: float = param(60, gt=0)
    weight: float = param(0.5, ge=0, le=1)
    candidates: int = param(50, ge=1)

    def needs_embedder(self) -> bool:
        return True

    @property
    def via(self) -> str:
        return f"hybrid-{self.method}"

    def ranking(self, store: MemoryStore, query: Query, k: int) -> Scored:
        """The fused ranking of the two lists' top ``candidates``, then the rest (see the class docstring)."""
        require_embedder(self.name, query.embedder)
        first = self._fused(store, query, self.candidates)
        if k <= len(first.entries):
            return first
        everything = len(store.entries(query.conversation_id))
        placed = set(map(_ID, first.entries))
        rest = [(e, score) for e, score in self._fused(store, query, everything) if e.id not in placed]
        return Ranking(first.entries + [e for e, _ in rest], first.scores + [score for _, score in rest])

    def _fused(self, store: MemoryStore, query: Query, n: int) -> Ranking:
        """The fusion of each list's top ``n``."""
        # Each index ranks distinct entries, so its top n is what ``recall`` would return, without the Hits.
        dense = _top(_DENSE.ranking(store, query, n), n)
        lexical = _top(_BM25.ranking(store, query, n), n)
        dense_ids = list(map(_ID, dense.entries))
        lexical_ids = list(map(_ID, lexical.entries))
        by_id: dict[str, MemoryEntry] = dict(zip(dense_ids, dense.entries))
        by_id.update(zip(lexical_ids, lexical.entries))
        if self.method == "rrf":
            fused = rrf_fuse([dense_ids, lexical_ids], self.rrf_k)
        else:
            fused = weighted_fuse(dict(zip(dense_ids, dense.scores)), dict(zip(lexical_ids, lexical.scores)),
                                  self.weight)
        # Ties keep first-seen order (dense rank, then BM25 rank): sorted() is stable, reversed too.
        order = sorted(by_id, key=fused.__getitem__, reverse=True) if self.method == "rrf" \
            else sorted(by_id, key=lambda doc: -fused[doc])  # (a NaN weight sorts as it always did)
        return Ranking(list(map(by_id.__getitem__, order)), list(map(fused.__getitem__, order)))


_ID = attrgetter("id")
_DENSE, _BM25 = Dense(), Bm25()  # made once: a strategy checks its parameters on construction


def _top(scored: Scored, n: int) -> Ranking:
    """The first ``n`` of a dense or BM25 ranking (distinct entries) as a ``Ranking``."""
    if isinstance(scored, Ranking):
        return Ranking(scored.entries[:n], scored.scores[:n])
    pairs = list(islice(scored, n))  # an empty memory's []
    return Ranking([entry for entry, _ in pairs], [score for _, score in pairs])
