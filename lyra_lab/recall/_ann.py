"""Approximate dense recall for very large memories: an HNSW graph (``hnswlib``) kept in ``store.cache``.

Exact cosine (``dense``) scans every row: ~5 ms per 100k entries of 384
floats, so ~50 ms at 1M.  ``dense_ann`` answers from an HNSW graph instead,
at a small, measured loss of recall (``benchmarks/recall_latency.py``).  The
library was chosen by measurement against usearch and faiss HNSW (see the
benchmark's docstring).  The graph follows the store's change log like the
exact index does: an added entry embeds one text and is inserted; a removed
entry is marked deleted (``hnswlib`` skips it in searches); the graph is built
afresh, from the kept vectors, once deleted labels are more than half of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from lyra_lab.backends import Embedder
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall._base import RECALLERS, BaseRecaller, Scored, require_embedder
from lyra_lab.recall._index import VectorIndex, query_vector
from lyra_lab.recall._types import Query
from lyra_lab._params import param

if TYPE_CHECKING:
    import hnswlib

_MIN_CAPACITY = 1024


class AnnIndex(VectorIndex):
    """An HNSW graph over one conversation's entry embeddings (inner product on unit vectors).

    Attributes:
        builds: how many times the graph was built from scratch (1 + compactions).
    """

    def __init__(self, conversation_id: str, dim: int, m: int, ef_construction: int, threads: int):
        super().__init__(conversation_id, dim)  # an entry's row is its label in the graph
        self.m, self.ef_construction, self.threads = m, ef_construction, threads
        self.builds = 0
        self._graph: Any = None  # an hnswlib.Index once the first entries come (hnswlib has no type stubs)

    def _new_graph(self, capacity: int) -> hnswlib.Index:
        try:
            import hnswlib
        except ImportError as exc:
            raise ImportError("recaller 'dense_ann' needs hnswlib (a lyra-lab dependency): pip install hnswlib") from exc

        graph = hnswlib.Index(space="ip", dim=self.dim)
        graph.init_index(max_elements=capacity, M=self.m, ef_construction=self.ef_construction)
        graph.set_num_threads(self.threads)
        self.builds += 1
        return graph

    def _kill(self, entry_id: str) -> None:
        label = self._unplace(entry_id)
        if label is not None:
            self._graph.mark_deleted(label)

    def _store(self, entries: Sequence[MemoryEntry], vectors: np.ndarray) -> None:
        start = len(self._entries)
        need = start + len(entries)
        if self._graph is None:
            self._graph = self._new_graph(max(_MIN_CAPACITY, need))
        elif need > self._graph.get_max_elements():
            self._graph.resize_index(max(need, 2 * self._graph.get_max_elements()))
        self._graph.add_items(vectors, np.arange(start, need), num_threads=self.threads)
        self._place(entries)

    def _maybe_compact(self) -> None:
        if not self._compact_due(_MIN_CAPACITY):
            return
        keep = [i for i, e in enumerate(self._entries) if e is not None]
        entries = [self._entries[i] for i in keep]
        vectors = self._vectors(keep)
        self._graph, self._entries, self._row = None, [], {}
        self._store(entries, vectors)  # type: ignore[arg-type]

    def _vectors(self, labels: list[int] | np.ndarray) -> np.ndarray:
        """Stored vectors of the labels (the graph keeps them: no second copy here)."""
        return np.asarray(self._graph.get_items(np.asarray(labels, dtype=np.int64), return_type="numpy"),
                          dtype=np.float32).reshape(len(labels), self.dim)

    def search(self, query_vector: np.ndarray, k: int, ef: int) -> list[tuple[MemoryEntry, float]]:
        """About the ``k`` most similar live entries, best first, with their cosine."""
        k = min(k, len(self._row))
        if k <= 0:
            return []
        query_vector = np.asarray(query_vector, dtype=np.float32)
        self._graph.set_ef(max(ef, k))
        try:
            labels, distances = self._graph.knn_query(query_vector, k=k, num_threads=1)
        except RuntimeError:
            # Too few reachable live nodes (a small graph with many deletions): scan exactly.
            live = np.array(sorted(self._row.values()), dtype=np.int64)
            scores = self._vectors(live) @ query_vector
            best = np.argsort(-scores, kind="stable")[:k]
            return [(self._entries[int(live[i])], float(scores[i])) for i in best]  # type: ignore[misc]
        # hnswlib's "ip" distance is 1 - inner product.
        return [(self._entries[int(label)], 1.0 - float(d))  # type: ignore[misc]
                for label, d in zip(labels[0], distances[0], strict=True)]


class GraphParams(NamedTuple):
    """How an HNSW graph is built: degree ``m``, ``ef_construction`` and insert ``threads`` (``DenseAnn``)."""

    m: int = 16
    ef_construction: int = 100
    threads: int = 1


def ann_index(store: MemoryStore, embedder: Embedder, conversation_id: str,
              graph: GraphParams = GraphParams()) -> AnnIndex:
    """The conversation's HNSW index for ``embedder`` and graph parameters, from ``store.cache``, synced."""
    m, ef_construction, threads = graph
    key = f"recall.ann:{embedder.name}:{conversation_id}:{m}:{ef_construction}"
    index = store.cache.get(key)
    if index is None or index.dim != embedder.dim:
        index = AnnIndex(conversation_id, embedder.dim, m, ef_construction, threads)
        store.cache[key] = index
    index.sync(store, embedder)
    return index


@RECALLERS.register("dense_ann")
@dataclass(frozen=True)
class DenseAnn(BaseRecaller):
    """Top-k entries by approximate cosine similarity, from an HNSW graph (``hnswlib``).

    For memories of ~100k entries and more; below that, exact ``dense`` is as
    fast and exact.

    Args:
        m: graph degree (hnswlib ``M``); more is better recall, more memory.
        ef_construction: candidate list size while inserting.
        ef_search: candidate list size while searching (at least ``k`` is used);
            the recall/latency knob.  The default, 128, is the smallest measured
            setting that keeps recall@10 against exact search at 0.95 for 1M
            memories (0.953, query p50 1.05 ms under load; 64 gave 0.85,
            ``benchmarks/recall_latency.py --ann 1000000``).
        threads: threads used to insert a batch (queries use one).
    """

    m: int = param(16, ge=2)
    ef_construction: int = param(100, ge=1)
    ef_search: int = param(128, ge=1)
    threads: int = param(1, ge=1)

    def needs_embedder(self) -> bool:
        return True

    def ranking(self, store: MemoryStore, query: Query, k: int) -> Scored:
        """About the ``k`` most similar entries, best first."""
        embedder = require_embedder(self.name, query.embedder)
        index = ann_index(store, embedder, query.conversation_id, GraphParams(self.m, self.ef_construction, self.threads))
        if len(index) == 0:
            return []
        return index.search(query_vector(query, embedder), k, self.ef_search)
