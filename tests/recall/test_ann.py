"""``dense_ann`` follows the store's change log; on small memories HNSW search is exact."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab import ConfigError
from lyra_lab.backends import HashingEmbedder
from lyra_lab.memory import MemoryStore
from lyra_lab.recall import DenseAnn, Query, RECALLERS, ann_index

from .test_dense_index import CountingEmbedder, entry

_ops = st.lists(st.tuples(st.sampled_from(["add", "remove", "replace", "query"]), st.integers(0, 40)),
                max_size=60)


@settings(max_examples=100, deadline=None)
@given(ops=_ops, k=st.integers(1, 10))
def test_incremental_ann_equals_brute_force_on_small_memories(ops, k):
    store, emb = MemoryStore(), HashingEmbedder(dim=32)
    recaller = DenseAnn(ef_search=64)
    for op, i in ops:
        eid = f"c:e{i}"
        if op == "add" and eid not in store:
            store.add(entry(i))
        elif op == "remove" and eid in store:
            store.apply(remove=[eid])
        elif op == "replace" and eid in store:
            store.apply(remove=[eid], add=[entry(i, f"replaced text {i * 7}")])
        elif op == "query":
            recaller.recall(store, Query("topic3", "c", embedder=emb), k)
    hits = recaller.recall(store, Query("note topic3", "c", embedder=emb), k)
    entries = store.entries("c")
    if not entries:
        assert hits == []
        return
    scores = emb.embed([e.text for e in entries]) @ emb.embed(["note topic3"], kind="query")[0]
    assert [h.entry for h in hits] == [store.get(h.entry.id) for h in hits]  # live, current text
    np.testing.assert_allclose([h.score for h in hits], sorted(scores, reverse=True)[:k], atol=1e-5)


def test_adds_embed_only_themselves_and_removals_are_respected():
    store, emb = MemoryStore([entry(i) for i in range(200)]), CountingEmbedder()
    DenseAnn().recall(store, Query("topic3", "c", embedder=emb), 5)
    assert emb.calls == [("passage", 200), ("query", 1)]
    emb.calls.clear()
    store.add(entry(300, "a brand new fact about zebras"))
    hits = DenseAnn().recall(store, Query("new fact about zebras", "c", embedder=emb), 1)
    assert emb.calls == [("passage", 1), ("query", 1)] and hits[0].entry.id == "c:e300"
    store.apply(remove=["c:e300"])
    hits = DenseAnn().recall(store, Query("new fact about zebras", "c", embedder=emb), 10)
    assert "c:e300" not in {h.entry.id for h in hits}
    assert ann_index(store, emb, "c").builds == 1


def test_many_removals_rebuild_the_graph_from_kept_vectors():
    store, emb = MemoryStore([entry(i) for i in range(3000)]), CountingEmbedder()
    ann_index(store, emb, "c")
    store.apply(remove=[f"c:e{i}" for i in range(2500)])
    index = ann_index(store, emb, "c")
    assert len(index) == 500 and index.embedded == 3000 and index.builds == 2
    hits = DenseAnn().recall(store, Query("topic3", "c", embedder=emb), 500)
    assert {h.entry.id for h in hits} <= {f"c:e{i}" for i in range(2500, 3000)}


def test_registry_validates_graph_parameters():
    assert RECALLERS.build({"name": "dense_ann", "ef_search": 128}) == DenseAnn(ef_search=128)
    with pytest.raises(ConfigError, match="ef_search"):
        RECALLERS.build({"name": "dense_ann", "ef_search": 0})
