"""The dense index: one conversation's entry embeddings in one contiguous float32 matrix.

Brute-force cosine over a few thousand rows is faster than any ANN structure
at this size, *provided* the matrix is not rebuilt from the store on every
query.  So the index lives in ``store.cache`` under (embedder name,
conversation id) and follows the store's change log: an added entry embeds
one text and appends one row (the matrix grows by doubling, so appends are
amortized O(1)); a removed entry marks its row dead, and dead rows are
squeezed out (without re-embedding) once they are more than half the matrix.

An index remembers nothing of a query: a recaller keeps the query's cosines in the
``Query`` it answers (``Query.remember``), so a deeper ranking of the same query reuses
them and a new query computes them again.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lyra_lab.backends import Embedder
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall._ranking import Ranking
from lyra_lab.recall._types import Query

_MIN_CAPACITY = 64


def _epoch(entry: MemoryEntry) -> float:
    return entry.end.timestamp() if entry.end is not None else math.nan


class ChangeLogIndex:
    """What every incremental index of one conversation shares: following the store's change log.

    Every index keeps its entries by row (``_entries``, ``None`` once killed) and the row of
    each live entry id (``_row``). A subclass implements ``_add`` (index fresh entries,
    embedding them with the embedder if it needs one, and ``_place`` them), ``_kill``
    (``_unplace`` one entry and clear what the index holds at its row) and ``_maybe_compact``
    (squeeze out dead rows once ``_compact_due``).
    """

    def __init__(self, conversation_id: str):
        self.conversation_id = conversation_id
        self.version = 0  # of the store, at the last sync
        self._entries: list[MemoryEntry | None] = []
        self._row: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._row)

    def _place(self, entries: Sequence[MemoryEntry]) -> None:
        """Give ``entries`` the next rows, in order."""
        start = len(self._entries)
        for offset, entry in enumerate(entries):
            self._row[entry.id] = start + offset
        self._entries.extend(entries)

    def _unplace(self, entry_id: str) -> int | None:
        """Mark the entry's row dead; the row, or ``None`` when the id has none."""
        row = self._row.pop(entry_id, None)
        if row is not None:
            self._entries[row] = None
        return row

    def _compact_due(self, min_dead: int) -> bool:
        """Dead rows are more than ``min_dead`` and more than half of the rows."""
        used = len(self._entries)
        dead = used - len(self._row)
        return dead > min_dead and dead * 2 > used

    def _add(self, fresh: list[MemoryEntry], embedder: Any) -> None:  # each index says what it needs (BM25: nothing)
        raise NotImplementedError

    def _kill(self, entry_id: str) -> None:
        raise NotImplementedError

    def _maybe_compact(self) -> None:
        raise NotImplementedError

    def sync(self, store: MemoryStore, embedder: Embedder | None = None) -> int:
        """Apply the store's changes since the last sync; returns how many texts were indexed.

        Kills removed and changed entries, indexes the ones to (re-)index, compacts.
        """
        if store.version == self.version:
            return 0
        fresh = changed_entries(store, self.version, self.conversation_id, self._kill)
        self.version = store.version
        if fresh:
            self._add(fresh, embedder)
        self._maybe_compact()
        return len(fresh)

    def _ranking(self, rows: np.ndarray, scores: np.ndarray) -> Ranking:
        """The ranking of the given live rows (best first) with their scores."""
        return Ranking(list(map(self._entries.__getitem__, rows.tolist())), scores.tolist())  # type: ignore[arg-type]


class VectorIndex(ChangeLogIndex):
    """A change-log index of ``dim``-wide passage embeddings: embeds fresh entries, then ``_store``s them.

    Attributes:
        embedded: how many texts this index has embedded so far (for tests and cost logs).
    """

    def __init__(self, conversation_id: str, dim: int):
        super().__init__(conversation_id)
        self.dim = dim
        self.embedded = 0

    def _add(self, fresh: list[MemoryEntry], embedder: Embedder) -> None:
        self._store(fresh, embed_passages(embedder, fresh, self.dim))
        self.embedded += len(fresh)

    def _store(self, entries: Sequence[MemoryEntry], vectors: np.ndarray) -> None:
        """Give ``entries`` (with their ``vectors``, one row each) the next rows."""
        raise NotImplementedError


class DenseIndex(VectorIndex):
    """Embeddings of one conversation's entries in one matrix, synced incrementally with a store."""

    def __init__(self, embedder_name: str, conversation_id: str, dim: int):
        super().__init__(conversation_id, dim)
        self.embedder_name = embedder_name
        self._matrix = np.zeros((_MIN_CAPACITY, dim), dtype=np.float32)
        self._ends = np.full(_MIN_CAPACITY, math.nan)  # epoch seconds of entry.end, for recency
        self._alive = np.zeros(_MIN_CAPACITY, dtype=bool)

    # -- syncing -------------------------------------------------------------
    def _kill(self, entry_id: str) -> None:
        row = self._unplace(entry_id)
        if row is not None:
            self._alive[row] = False

    def _store(self, entries: Sequence[MemoryEntry], vectors: np.ndarray) -> None:
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
        self._place(entries)

    def _maybe_compact(self) -> None:
        if not self._compact_due(_MIN_CAPACITY):
            return
        keep = np.flatnonzero(self._alive[: len(self._entries)])
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
        """Cosine (float32) of every live row with the query: ``(rows, scores)``, in row order."""
        vector = np.asarray(query_vector, dtype=np.float32)
        used = len(self._entries)
        # One matrix-vector product over the contiguous used block (no copy of the matrix).
        scores = self._matrix[:used] @ vector
        if len(self._row) == used:  # no dead rows: no fancy-index copy
            return np.arange(used), scores
        rows = np.flatnonzero(self._alive[:used])
        return rows, scores[rows]

    def top(self, rows: np.ndarray, scores: np.ndarray, k: int) -> Ranking:
        """The ``k`` best of the given live rows by ``scores``, best first (ties: older row first)."""
        order = top_k(scores, k)
        return self._ranking(rows[order], scores[order])

    def ends(self, rows: np.ndarray) -> np.ndarray:
        """Epoch seconds of the rows' entry end times (NaN when undated)."""
        return self._ends[rows]

    def entry(self, row: int) -> MemoryEntry:
        entry = self._entries[int(row)]
        if entry is None:
            raise KeyError(f"row {row} of the dense index is dead")
        return entry



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
    """At least the ``k`` best positions of ``scores``, best first.

    All of them when fewer, or when sorting all is cheaper; one total order: score descending, then
    position ascending; NaN last.

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


def query_vector(query: Query, embedder: Embedder) -> np.ndarray:
    """``embed_query`` of the query's text, embedded once per query (however many recalls ask)."""
    return query.remember(("vector", embedder.name), lambda: embed_query(embedder, query.text))


def query_cosines(index: DenseIndex, query: Query, embedder: Embedder) -> tuple[np.ndarray, np.ndarray]:
    """``index.scores`` of the query's vector, computed once per query and index: ``(rows, cosines)``."""
    vector = query_vector(query, embedder)
    return query.remember(("cosines", id(index), index.version), lambda: index.scores(vector))
