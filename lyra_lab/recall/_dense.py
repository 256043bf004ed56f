"""Dense recall: cosine between the query and the conversation's entry embeddings."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np

from lyra_lab.backends import Embedder
from lyra_lab.memory import MemoryStore
from lyra_lab.recall._base import RECALLERS, BaseRecaller, Scored, require_embedder
from lyra_lab.recall._index import DenseIndex, dense_index, embed_query


class CosineRecaller(BaseRecaller):
    """A recaller scoring with the cosine of the query and the conversation's entry embeddings."""

    def needs_embedder(self) -> bool:
        return True

    def cosines(self, store: MemoryStore, query: str, conversation_id: str,
                embedder: Embedder | None) -> tuple[DenseIndex, np.ndarray, np.ndarray]:
        """The synced dense index and ``(rows, cosine)`` of its live rows; an empty memory embeds no query."""
        index, vector = self.query_vector(store, query, conversation_id, embedder)
        if vector is None:
            return index, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        rows, cosine = index.scores(vector)
        return index, rows, cosine

    def query_vector(self, store: MemoryStore, query: str, conversation_id: str,
                     embedder: Embedder | None) -> tuple[DenseIndex, np.ndarray | None]:
        """The synced dense index and the query's vector (None for an empty memory: nothing embedded)."""
        embedder = require_embedder(self.name, embedder)
        index = dense_index(store, embedder, conversation_id)
        return index, embed_query(embedder, query) if len(index) else None


@RECALLERS.register("dense")
@dataclass(frozen=True)
class Dense(CosineRecaller):
    """Top-k entries by cosine similarity (query embedded with ``kind="query"``).

    The entry embeddings live in an incremental index in ``store.cache``
    (see ``lyra_lab.recall._index``): a query embeds only the query.
    """

    def ranking(self, store: MemoryStore, query: str, k: int, *, conversation_id: str,
                embedder: Embedder | None, now: datetime | None) -> Scored:
        index, vector = self.query_vector(store, query, conversation_id, embedder)
        return index.ranking(vector, k) if vector is not None else []
