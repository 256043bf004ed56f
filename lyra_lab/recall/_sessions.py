"""Session-level scores for two-stage recall: each session as one mean vector and one BM25 document.

A session's dense score is the cosine between the query and the mean of its turn
vectors (re-normalized); its lexical score is BM25 over the concatenation of its
turn keys, in a small derived store (one entry per session, id ``session:<n>``)
kept beside the keyed view.
"""

from __future__ import annotations

import numpy as np

from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall._bm25 import Tokenizer, bm25_index
from lyra_lab.recall._keys import KeyedView


def session_store(view: KeyedView) -> MemoryStore:
    """One entry per session of ``view`` whose text joins the session's keys, cached on the view."""
    cached = view.store.cache.get("recall.sessions")
    if cached is not None and cached[0] == view.version:
        return cached[1]
    texts: dict[int, list[str]] = {}
    for position, entry in enumerate(view.entries):
        texts.setdefault(int(view.sessions[position]), []).append(view.store.get(entry.id).text)
    store = MemoryStore(
        MemoryEntry(id=f"session:{n}", conversation_id=view.conversation_id, kind="session",
                    text="\n".join(parts), turn_ids=())
        for n, parts in sorted(texts.items()))
    view.store.cache["recall.sessions"] = (view.version, store)
    return store


def lexical_session_scores(view: KeyedView, query: str, tokenizer: Tokenizer) -> np.ndarray:
    """BM25 score of each session (by session number) for ``query``."""
    store = session_store(view)
    index = bm25_index(store, view.conversation_id, tokenizer)
    raw = index.scores(query)
    out = np.zeros(len(view.session_names))
    for row in index.live_rows():
        out[int(index.entry(row).id.removeprefix("session:"))] = raw[row]
    return out


def session_means(vectors: np.ndarray, sessions: np.ndarray, n_sessions: int) -> np.ndarray:
    """Each session's mean vector (of the rows of ``vectors`` in it), scaled to unit length.

    >>> session_means(np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 2.0]]), np.array([0, 0, 1]), 2).round(4).tolist()
    [[0.7071, 0.7071], [0.0, 1.0]]
    """
    onehot = np.zeros((n_sessions, len(sessions)))
    onehot[sessions, np.arange(len(sessions))] = 1.0
    sums = onehot @ np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    return np.divide(sums, norms, out=np.zeros_like(sums), where=norms > 0)
