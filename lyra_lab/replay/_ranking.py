"""A probe's ranking read as deep as its measures need, while the memory is as the probe found it."""

from __future__ import annotations

from typing import Sequence

from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import Query, Recaller


#: Entries asked for when a ranking is read deeper than its hits, so one fetch serves the measures reading
#: it: on LoCoMo the largest equal-budget context (1,024 tokens) holds 14.8 whole lines on average (p95
#: 25, max 38), and the session measures at k = 10 read 40.  Deeper reads fetch again, twice as deep.
MIN_FETCH = 40


class DeepRanking:
    """The recaller's ranking of one ``Query``, fetched deeper on demand (``measures.RankedEntries``).

    Each fetch asks the recaller again with the same ``Query``, so it reuses what the timed
    call computed (the question's vector, the indexes' scores) and costs a sort.  Reading it
    after the store changed is an error: a replay yields each outcome while its memory holds.
    """

    def __init__(self, recaller: Recaller, store: MemoryStore, query: Query, first: Sequence[MemoryEntry],
                 asked_for: int):
        self._recaller, self._store, self._query = recaller, store, query
        self._version = store.version
        self._entries = list(first)
        self._done = len(first) < asked_for  # the recaller ranks no more than it gave
        self._rest: list[MemoryEntry] | None = None

    def entries(self, n: int, *, complete: bool = False) -> Sequence[MemoryEntry]:
        """The first ``n`` entries, best first; ``complete``: then the unranked ones in memory order."""
        if n > len(self._entries) and not self._done:
            self._check()
            depth = max(n, 2 * len(self._entries), MIN_FETCH)
            self._entries = [hit.entry for hit in self._recaller.recall(self._store, self._query, depth)]
            self._done = len(self._entries) < depth
        if not complete or n <= len(self._entries) or not self._done:
            return self._entries[:n]
        if self._rest is None:
            self._check()
            ranked = {entry.id for entry in self._entries}
            self._rest = [e for e in self._store.entries(self._query.conversation_id) if e.id not in ranked]
        return (self._entries + self._rest)[:n]

    def _check(self) -> None:
        if self._store.version != self._version:
            raise RuntimeError("this ranking was read after the memory changed: read a probe's ranking "
                               "before the replay goes on")
