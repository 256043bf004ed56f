"""Dense recall: cosine between the query and the conversation's entry embeddings."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from lyra_lab.backends import Embedder
from lyra_lab.memory import MemoryStore
from lyra_lab.recall._base import RECALLERS, check_k, ranked, require_embedder
from lyra_lab.recall._index import dense_index, embed_query
from lyra_lab.recall._types import Hit


@RECALLERS.register("dense")
@dataclass(frozen=True)
class Dense:
    """Top-k entries by cosine similarity (query embedded with ``kind="query"``).

    The entry embeddings live in an incremental index in ``store.cache``
    (see ``lyra_lab.recall._index``): a query embeds only the query.
    """

    def recall(
        self,
        store: MemoryStore,
        query: str,
        k: int,
        *,
        conversation_id: str,
        embedder: Embedder | None = None,
        now: datetime | None = None,
    ) -> list[Hit]:
        check_k(k)
        embedder = require_embedder("dense", embedder)
        index = dense_index(store, embedder, conversation_id)
        if k == 0 or len(index) == 0:
            return []
        rows, scores = index.scores(embed_query(embedder, query))
        return ranked(index.top(rows, scores, k), k, via="dense")
