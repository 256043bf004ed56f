"""Lexical recall with BM25 (``bm25s``), its index cached per conversation in ``store.cache``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from lyra_lab.backends._types import Embedder
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall._base import RECALLERS, check_k, ranked
from lyra_lab.recall._index import top_k
from lyra_lab.recall._types import Hit

STOPWORDS = "en"


@dataclass
class Bm25Index:
    """A ``bm25s.BM25`` over one conversation's entries, valid for ``store.version == version``."""

    version: int
    entries: list[MemoryEntry]
    retriever: Any = None  # None when no entry has a single indexable token
    ids: frozenset[str] = field(default_factory=frozenset)
    builds: int = 0


def _tokenize(texts: list[str], return_ids: bool) -> Any:
    import bm25s

    return bm25s.tokenize(texts, stopwords=STOPWORDS, return_ids=return_ids, show_progress=False)


def _build(entries: list[MemoryEntry]) -> Any:
    import bm25s

    if not entries:
        return None
    tokens = _tokenize([e.text for e in entries], return_ids=True)
    if not tokens.vocab:  # bm25s cannot index a corpus made only of stopwords
        return None
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    return retriever


def bm25_index(store: MemoryStore, conversation_id: str) -> Bm25Index:
    """The conversation's BM25 index, rebuilt only when the store changed *this* conversation.

    BM25's document frequencies are corpus-wide, so an edit means a rebuild;
    edits to other conversations only bump the cached version.
    """
    key = f"recall.bm25:{conversation_id}"
    index: Bm25Index | None = store.cache.get(key)
    if index is not None and index.version == store.version:
        return index
    if index is not None:
        changed = {i for _, i in store.changes_since(index.version)}
        touched = changed & index.ids or any(
            i in store and store.get(i).conversation_id == conversation_id for i in changed
        )
        if not touched:
            index.version = store.version
            return index
    entries = store.entries(conversation_id)
    builds = index.builds + 1 if index is not None else 1
    index = Bm25Index(store.version, entries, _build(entries), frozenset(e.id for e in entries), builds)
    store.cache[key] = index
    return index


def bm25_scores(index: Bm25Index, query: str) -> np.ndarray:
    """BM25 score of every entry of the index for ``query`` (zeros when nothing matches)."""
    if index.retriever is None:
        return np.zeros(len(index.entries))
    query_tokens = _tokenize([query], return_ids=False)[0]
    if not query_tokens:
        return np.zeros(len(index.entries))
    return np.asarray(index.retriever.get_scores(query_tokens), dtype=np.float64)


@RECALLERS.register("bm25")
@dataclass(frozen=True)
class Bm25:
    """Top-k entries by BM25 (bm25s tokenizer, English stopwords).

    Entries sharing no term with the query score 0 and are not returned, so a
    query of only stopwords or unknown words recalls nothing.
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
        index = bm25_index(store, conversation_id)
        scores = bm25_scores(index, query)
        order = [i for i in top_k(scores, k) if scores[i] > 0]
        return ranked(((index.entries[i], scores[i]) for i in order), k, via="bm25")
