"""BM25 scores follow the index: adds and removes change them, and an index remembers no query."""

from __future__ import annotations

import numpy as np

from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import bm25_index


def entry(i: int, text: str) -> MemoryEntry:
    return MemoryEntry(f"e{i}", "c", "turn", text, (f"t{i}",))


def test_scores_follow_adds_and_removes():
    store = MemoryStore([entry(0, "cello lessons"), entry(1, "hiking trip")])
    index = bm25_index(store, "c")
    first = index.scores("cello trip")
    assert index.scores("cello trip") is not first  # computed again: an index remembers no query
    np.testing.assert_array_equal(index.scores("cello trip"), first)
    store.add([entry(2, "cello concert cello")])
    index = bm25_index(store, "c")
    after_add = index.scores("cello trip")
    assert after_add is not first and len(after_add) == 3 and after_add[2] > 0
    store.apply(remove=["e2"])
    index = bm25_index(store, "c")
    after_remove = index.scores("cello trip")
    assert after_remove[2] == 0.0
    np.testing.assert_array_equal(index.scores("cello trip"), after_remove)
