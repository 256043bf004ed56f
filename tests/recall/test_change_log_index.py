"""The three change-log indexes share one compaction rule: dead rows more than a floor and more than half."""

from __future__ import annotations

import pytest

from lyra_lab.backends import HashingEmbedder
from lyra_lab.memory import MemoryStore
from lyra_lab.recall import ann_index, bm25_index, dense_index

from .test_dense_index import entry

EMB = HashingEmbedder(dim=16)

# (index of conversation "c" in a store, the floor of dead rows below which it never compacts)
INDEXES = {
    "dense": (lambda store: dense_index(store, EMB, "c"), 64),
    "bm25": (lambda store: bm25_index(store, "c"), 64),
    "dense_ann": (lambda store: ann_index(store, EMB, "c"), 1024),
}


@pytest.mark.parametrize("kind", sorted(INDEXES))
def test_rows_are_squeezed_out_only_once_dead_rows_pass_the_floor_and_half(kind):
    index_of, floor = INDEXES[kind]
    n = 2 * (floor + 1)
    store = MemoryStore([entry(i) for i in range(n)])
    index_of(store)
    store.apply(remove=[f"c:e{i}" for i in range(floor + 1)])  # past the floor, but exactly half: kept
    index = index_of(store)
    assert (len(index), len(index._entries)) == (n - floor - 1, n)
    store.apply(remove=[f"c:e{floor + 1}"])  # one more: more than half
    index = index_of(store)
    assert (len(index), len(index._entries)) == (n - floor - 2, n - floor - 2)
    assert [index._entries[row].id for row in sorted(index._row.values())] == \
        [e.id for e in store.entries("c")]  # the live entries, in store order, each at its row
