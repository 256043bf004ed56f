"""Dense recall: cosine between the query and the conversation's entry embeddings."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lyra_lab.memory import MemoryStore
from lyra_lab.recall._base import RECALLERS, BaseRecaller, Scored, require_embedder
from lyra_lab.recall._index import DenseIndex, dense_index, query_cosines
from lyra_lab.recall._types import Query


class CosineRecaller(BaseRecaller):
    """A recaller scoring with the cosine of the query and the conversation's entry embeddings."""

    def needs_embedder(self) -> bool:
        """Always: it embeds the query and the memory."""
        return True

    def cosines(self, store: MemoryStore, query: Query) -> tuple[DenseIndex, np.ndarray, np.ndarray]:
        """The synced dense index and ``(rows, cosine)`` of its live rows; an empty memory embeds no query."""
        embedder = require_embedder(self.name, query.embedder)
        index = dense_index(store, embedder, query.conversation_id)
        if not len(index):
            return index, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        rows, cosine = query_cosines(index, query, embedder)
        return index, rows, cosine


@RECALLERS.register("dense")
@dataclass(frozen=True)
class Dense(CosineRecaller):
    """Top-k entries by cosine similarity (query embedded with ``kind="query"``).

    The entry embeddings live in an incremental index in ``store.cache``
    (see ``lyra_lab.recall._index``): a query embeds only the query.
    """

    def ranking(self, store: MemoryStore, query: Query, k: int) -> Scored:
        """The ``k`` most similar entries, best first (ties: older entry first)."""
        index, rows, cosine = self.cosines(store, query)
        return index.top(rows, cosine, k)
