"""Dense recall: cosine between the query and the conversation's entry embeddings."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from lyra_lab.backends._types import Embedder
from lyra_lab.memory import MemoryStore
from lyra_lab.recall._base import RECALLERS, BaseRecaller, Scored, require_embedder
from lyra_lab.recall._index import dense_index, embed_query


@RECALLERS.register("dense")
@dataclass(frozen=True)
class Dense(BaseRecaller):
    """Top-k entries by cosine similarity (query embedded with ``kind="query"``).

    The entry embeddings live in an incremental index in ``store.cache``
    (see ``lyra_lab.recall._index``): a query embeds only the query.
    """

    def needs_embedder(self) -> bool:
        return True

    def ranking(self, store: MemoryStore, query: str, k: int, *, conversation_id: str,
                embedder: Embedder | None, now: datetime | None) -> Scored:
        embedder = require_embedder(self.name, embedder)
        index = dense_index(store, embedder, conversation_id)
        if len(index) == 0:
            return []
        rows, scores = index.scores(embed_query(embedder, query))
        return index.top(rows, scores, k)
