"""BM25 keeps the last query's scores only while the index is unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import bm25_index


def entry(i: int, text: str) -> MemoryEntry:
    return MemoryEntry(f"e{i}", "c", "turn", text, (f"t{i}",))


def test_same_query_is_scored_once_until_an_add_or_remove():
    store = MemoryStore([entry(0, "cello lessons"), entry(1, "hiking trip")])
    index = bm25_index(store, "c")
    first = index.scores("cello trip")
    assert index.scores("cello trip") is first  # remembered, not recomputed
    with pytest.raises(ValueError):
        first[0] = 9.0  # read-only: no caller can corrupt the remembered scores
    store.add([entry(2, "cello concert cello")])
    index = bm25_index(store, "c")
    after_add = index.scores("cello trip")
    assert after_add is not first and len(after_add) == 3 and after_add[2] > 0
    store.apply(remove=["e2"])
    index = bm25_index(store, "c")
    after_remove = index.scores("cello trip")
    assert after_remove[2] == 0.0
    assert index.scores("hiking") is not after_remove  # another query replaces the remembered one
    np.testing.assert_array_equal(index.scores("cello trip"), after_remove)
