"""The dense index: one conversation's entry embeddings in one contiguous float32 matrix.

Brute-force cosine over a few thousand rows is faster than any ANN structure
at this size, *provided* the matrix is not rebuilt from the store on every
query.  So the index lives in ``store.cache`` under (embedder name,
conversation id) and follows the store's change log: an added entry embeds
one text and appends one row (the matrix grows by doubling, so appends are
amortized O(1)); a removed entry marks its row dead, and dead rows are
squeezed out (without re-embedding) once they are more than half the matrix.

Replay asks each query several times (the top k, the deeper budget ranking,
hybrid's candidates), so the index also keeps the last query's cosines and
its top rows (``TopMemo``) until the index changes or ``forget_query``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lyra_lab.backends import Embedder
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall._ranking import Ranking

_MIN_CAPACITY = 64


def _epoch(entry: MemoryEntry) -> float:
    return entry.end.timestamp() if entry.end is not None else math.nan


class ChangeLogIndex:
    """What every incremental index of one conversation shares: following the store's change log.

    A subclass sets ``conversation_id`` and ``version`` (0 before the first sync) and
    implements ``_add`` (index fresh entries, embedding them with the embedder if it
    needs one), ``_kill`` (forget one entry) and ``_maybe_compact`` (squeeze out dead rows).
    """

    conversation_id: str
    version: int
    _entries: list[MemoryEntry | None]

    def _add(self, fresh: list[MemoryEntry], embedder: Any) -> None:
        raise NotImplementedError

    def _kill(self, entry_id: str) -> None:
        raise NotImplementedError

    def _maybe_compact(self) -> None:
        raise NotImplementedError

    def sync(self, store: MemoryStore, embedder: Embedder | None = None) -> int:
        """Apply the store's changes since the last sync: kill removed and changed entries,
        index the ones to (re-)index, compact; returns how many texts were indexed."""
        if store.version == self.version:
            return 0
        fresh = changed_entries(store, self.version, self.conversation_id, self._kill)
        self.version = store.version
        if fresh:
            self._add(fresh, embedder)
        self._maybe_compact()
        return len(fresh)

    def forget_query(self) -> None:
        """Drop what is remembered of the last query (the next one is computed as if first)."""

    def _ranking(self, rows: np.ndarray, scores: np.ndarray) -> Ranking:
        """The ranking of the given live rows (best first) with their scores."""
        return Ranking(list(map(self._entries.__getitem__, rows.tolist())), scores.tolist())  # type: ignore[arg-type]


class DenseIndex(ChangeLogIndex):
    """Embeddings of one conversation's entries, synced incrementally with a store.

    Attributes:
        embedded: how many texts this index has embedded so far (for tests and cost logs).
    """

    def __init__(self, embedder_name: str, conversation_id: str, dim: int):
        self.embedder_name = embedder_name
        self.conversation_id = conversation_id
        self.dim = dim
        self.version = 0
        self.embedded = 0
        self._matrix = np.zeros((_MIN_CAPACITY, dim), dtype=np.float32)
        self._ends = np.full(_MIN_CAPACITY, math.nan)  # epoch seconds of entry.end, for recency
        self._alive = np.zeros(_MIN_CAPACITY, dtype=bool)
        self._entries: list[MemoryEntry | None] = []
        self._row: dict[str, int] = {}
        self._last: tuple[bytes, np.ndarray, np.ndarray] | None = None  # (query vector, rows, cosines)
        self._top = TopMemo()

    def __len__(self) -> int:
        return len(self._row)

    def forget_query(self) -> None:
        self._last = None
        self._top.forget()

    # -- syncing -------------------------------------------------------------
    def _add(self, fresh: list[MemoryEntry], embedder: Embedder) -> None:
        self._append(fresh, embed_passages(embedder, fresh, self.dim))
        self.embedded += len(fresh)

    def _kill(self, entry_id: str) -> None:
        row = self._row.pop(entry_id, None)
        if row is not None:
            self.forget_query()
            self._alive[row] = False
            self._entries[row] = None

    def _append(self, entries: Sequence[MemoryEntry], vectors: np.ndarray) -> None:
        self.forget_query()
        start = len(self._entries)
        need = start + len(entries)
        if need > len(self._matrix):
            capacity = max(need, 2 * len(self._matrix))
            self._matrix = grown(self._matrix, capacity, 0.0)
            self._ends = grown(self._ends, capacity, math.nan)
            self._alive = grown(self._alive, capacity, False)
        self._matrix[start:need] = vectors
        self._ends[start:need] = [_epoch(e) for e in entries]
        self._alive[start:need] = True
        for offset, entry in enumerate(entries):
            self._row[entry.id] = start + offset
        self._entries.extend(entries)

    def _maybe_compact(self) -> None:
        used = len(self._entries)
        dead = used - len(self._row)
        if dead <= _MIN_CAPACITY or dead * 2 <= used:
            return
        self.forget_query()
        keep = np.flatnonzero(self._alive[:used])
        capacity = max(_MIN_CAPACITY, 2 * len(keep))
        matrix = np.zeros((capacity, self.dim), dtype=np.float32)
        matrix[: len(keep)] = self._matrix[keep]
        ends = np.full(capacity, math.nan)
        ends[: len(keep)] = self._ends[keep]
        alive = np.zeros(capacity, dtype=bool)
        alive[: len(keep)] = True
        self._matrix, self._ends, self._alive = matrix, ends, alive
        self._entries = [self._entries[i] for i in keep]
        self._row = {e.id: i for i, e in enumerate(self._entries)}  # type: ignore[union-attr]

    # -- querying ------------------------------------------------------------
    def scores(self, query_vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Cosine (float32) of every live row with the query: ``(rows, scores)``, in row order.

        Both arrays are read-only: they are kept for the next ask of the same query
        vector until the index changes.
        """
        vector = np.asarray(query_vector, dtype=np.float32)
        key = vector.tobytes()
        if self._last is None or self._last[0] != key:
            rows, scores = self._scores(vector)
            rows.setflags(write=False)
            scores.setflags(write=False)
            self._last = (key, rows, scores)
        return self._last[1], self._last[2]

    def _scores(self, vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        used = len(self._entries)
        # One matrix-vector product over the contiguous used block (no copy of the matrix).
        scores = self._matrix[:used] @ vector
        if len(self._row) == used:  # no dead rows: no fancy-index copy
            return np.arange(used), scores
        rows = np.flatnonzero(self._alive[:used])
        return rows, scores[rows]

    def ranking(self, query_vector: np.ndarray, k: int) -> Ranking:
        """The ``k`` most similar live entries with their cosines, best first (ties: older row first)."""
        rows, scores = self.scores(query_vector)
        assert self._last is not None
        order = self._top.top(self._last[0], k, lambda depth: best_first(scores, depth))
        return self._ranking(rows[order], scores[order])

    def ends(self, rows: np.ndarray) -> np.ndarray:
        """Epoch seconds of the rows' entry end times (NaN when undated)."""
        return self._ends[rows]

    def entry(self, row: int) -> MemoryEntry:
        entry = self._entries[int(row)]
        if entry is None:
            raise KeyError(f"row {row} of the dense index is dead")
        return entry

    def top(self, rows: np.ndarray, scores: np.ndarray, k: int) -> Ranking:
        """The ``k`` best of the given live rows by ``scores``, best first (ties: older row first)."""
        order = top_k(scores, k)
        return self._ranking(rows[order], scores[order])


def changed_entries(store: MemoryStore, version: int, conversation_id: str,
                    kill: Callable[[str], None]) -> list[MemoryEntry]:
    """Replay the store's change log since ``version`` for an incremental index of one conversation.

    ``kill(entry_id)`` is called for every removed entry and for every entry about to be
    (re-)indexed; the returned entries, in log order, are those to index now.  An id can
    be removed and re-added with new text (a replaced gist): its old row is killed and
    what the store holds now is returned.
    """
    pending: dict[str, None] = {}  # ids to (re-)index, in log order
    for op, entry_id in store.changes_since(version):
        if op == "remove":
            pending.pop(entry_id, None)
            kill(entry_id)
        else:
            pending[entry_id] = None
    fresh = [store.get(i) for i in pending if i in store]
    fresh = [e for e in fresh if e.conversation_id == conversation_id]
    for entry in fresh:
        kill(entry.id)
    return fresh


def embed_passages(embedder: Embedder, entries: Sequence[MemoryEntry], dim: int) -> np.ndarray:
    """The entries' passage embeddings as float32 rows; a wrong shape is a ``ValueError`` naming the embedder."""
    vectors = np.asarray(embedder.embed([e.text for e in entries], kind="passage"), dtype=np.float32)
    if vectors.shape != (len(entries), dim):
        raise ValueError(f"embedder {embedder.name!r} returned shape {vectors.shape}, "
                         f"expected ({len(entries)}, {dim})")
    return vectors


#: Up to this many scores one stable sort of all of them beats a partition plus a sort of the cut.  Measured
#: over 3,000 different arrays a size (k 10 and 50), each ranked once: at 128 scores 5.3 us against 7.1-8.0,
#: at 256 10.6 against 7.3-8.2, at 512 23 against 8.3-9.7; on the LoCoMo benchmark's own cosines and BM25
#: scores (300-900 of them) 15-40 us against 8-12.  (Timing one array over and over, as an earlier figure
#: did -- 7.5 against 39 us at 500 -- lets the branch predictor learn the sort: the full sort looked 4x cheaper.)
FULL_SORT_MAX = 192


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` highest scores, best first; ties go to the lower position (NaN last)."""
    return best_first(scores, k)[:k]


def best_first(scores: np.ndarray, k: int) -> np.ndarray:
    """At least the ``k`` best positions of ``scores`` (all of them when fewer, or when sorting all is cheaper),
    best first in one total order: score descending, then position ascending; NaN last.

    Up to ``FULL_SORT_MAX`` scores this is one stable sort of them all.  Above it,
    ``np.argpartition`` finds the k-th best value in one pass, without negating
    (copying) the scores; every position tying with it is then kept, so which of
    equal scores make the cut does not depend on the partition's internals.
    """
    n = len(scores)
    if n <= FULL_SORT_MAX:
        return np.argsort(-scores, kind="stable")
    k = min(k, n)
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k < n:
        kth = np.partition(scores, n - k)[n - k:].min()  # NaN (sorted last) if any of the k best is NaN
        part = np.flatnonzero(scores >= kth) if not np.isnan(kth) else np.arange(n)
    else:
        part = np.arange(n)
    # lexsort: last key is primary; position breaks ties so results are deterministic.
    return part[np.lexsort((part, -scores[part]))][:k]


class TopMemo:
    """One query's best positions, kept to the deepest ``k`` asked so far and sliced for shallower asks.

    ``best_first(scores, k)`` is a prefix of one total order (score descending,
    position ascending; NaN last), so its first ``k`` are a prefix of any deeper
    answer: slicing gives exactly what a new call would.  An answer longer than
    asked (a full sort), or shorter (all there is), is complete.

    Every ask is answered at least ``min_depth`` deep: replay's top-k call is
    followed by deeper asks of the same query (hybrid's 50 candidates, the
    100-deep budget ranking), and a partition's cut at 100 costs ~1-2 us more
    than at 10 (of ~10-12 us, 300-900 scores), a second partition ~10 us.
    """

    __slots__ = ("_asked", "_key", "_order", "min_depth")

    def __init__(self, min_depth: int = 100) -> None:
        self.min_depth = min_depth
        self.forget()

    def forget(self) -> None:
        self._key: object = None
        self._order = np.zeros(0, dtype=np.int64)
        self._asked = 0

    def top(self, key: object, k: int, order_of: Callable[[int], np.ndarray]) -> np.ndarray:
        """``order_of(k)[:k]``, from the remembered answer if it is for ``key`` and deep enough (or complete);
        a new answer is asked ``max(k, min_depth)`` deep."""
        if self._key != key or (k > len(self._order) and len(self._order) == self._asked):
            depth = max(k, self.min_depth)
            self._key, self._order, self._asked = key, order_of(depth), depth
        return self._order[:k]


def forget_queries(store: MemoryStore) -> None:
    """Make every index in ``store.cache`` forget its last query, in stores derived from it too
    (``keyed_view``'s, the session store), so that the next recall pays for its query as a first one would."""
    for value in list(store.cache.values()):
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, ChangeLogIndex):
                item.forget_query()
            derived = item if isinstance(item, MemoryStore) else getattr(item, "store", None)
            if isinstance(derived, MemoryStore) and derived is not store:
                forget_queries(derived)


def grown(array: np.ndarray, capacity: int, fill: object) -> np.ndarray:
    """``array`` in a new array of ``capacity`` rows, the new rows set to ``fill``."""
    shape = (capacity,) + array.shape[1:]
    out = np.full(shape, fill, dtype=array.dtype)
    out[: len(array)] = array
    return out


def dense_index(store: MemoryStore, embedder: Embedder, conversation_id: str) -> DenseIndex:
    """The conversation's dense index for ``embedder``, from ``store.cache``, synced to the store."""
    key = f"recall.dense:{embedder.name}:{conversation_id}"
    index = store.cache.get(key)
    if index is None or index.dim != embedder.dim:
        index = DenseIndex(embedder.name, conversation_id, embedder.dim)
        store.cache[key] = index
    index.sync(store, embedder)
    return index


def embed_query(embedder: Embedder, query: str) -> np.ndarray:
    """The query's unit vector (``kind="query"``, so e5-style models get their prefix)."""
    return np.asarray(embedder.embed([query], kind="query"), dtype=np.float32)[0]
