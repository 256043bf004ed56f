"""The dense index follows the store incrementally: it never re-embeds what it already holds."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lyra_lab.backends import HashingEmbedder
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import Dense, Query, RECALLERS, dense_index

T0 = datetime(2023, 5, 8, tzinfo=timezone.utc)


class CountingEmbedder(HashingEmbedder):
    def __init__(self):
        super().__init__(dim=64)
        self.calls: list[tuple[str, int]] = []

    def embed(self, texts, kind="passage"):
        self.calls.append((kind, len(texts)))
        return super().embed(texts, kind)


def entry(i: int, text: str | None = None, cid: str = "c") -> MemoryEntry:
    t = T0 + timedelta(hours=i)
    return MemoryEntry(f"{cid}:e{i}", cid, "turn", text or f"note number {i} about topic{i % 7}",
                       (f"{cid}:t{i}",), ("s",), t, t)


def test_adding_one_entry_embeds_one_text_and_a_query_embeds_only_the_query():
    store, emb = MemoryStore([entry(i) for i in range(30)]), CountingEmbedder()
    Dense().recall(store, Query("topic3", "c", embedder=emb), 5)
    assert emb.calls == [("passage", 30), ("query", 1)]
    emb.calls.clear()
    Dense().recall(store, Query("topic4", "c", embedder=emb), 5)
    assert emb.calls == [("query", 1)]  # no rebuild, no re-embedding
    emb.calls.clear()
    store.add(entry(30, "a brand new fact about zebras"))
    store.add(entry(99, "another conversation", cid="other"))
    hits = Dense().recall(store, Query("new fact about zebras", "c", embedder=emb), 1)
    assert emb.calls == [("passage", 1), ("query", 1)]  # only the new entry of *this* conversation
    assert hits[0].entry.id == "c:e30"
    assert dense_index(store, emb, "c").embedded == 31


def test_removal_is_respected_and_a_replaced_entry_is_re_embedded():
    store, emb = MemoryStore([entry(i) for i in range(10)]), CountingEmbedder()
    assert Dense().recall(store, Query("topic3", "c", embedder=emb), 1)[0].entry.id == "c:e3"
    store.apply(remove=["c:e3"])
    hits = Dense().recall(store, Query("topic3", "c", embedder=emb), 10)
    assert "c:e3" not in {h.entry.id for h in hits} and len(hits) == 9
    # Same id, new text (a replaced gist): the old vector must not survive.
    store.apply(remove=["c:e5"], add=[entry(5, "now about volcanoes")])
    emb.calls.clear()
    hits = Dense().recall(store, Query("volcanoes", "c", embedder=emb), 1)
    assert emb.calls == [("passage", 1), ("query", 1)]
    assert hits[0].entry.text == "now about volcanoes"


def test_many_removals_compact_the_matrix_without_re_embedding():
    store, emb = MemoryStore([entry(i) for i in range(300)]), CountingEmbedder()
    index = dense_index(store, emb, "c")
    store.apply(remove=[f"c:e{i}" for i in range(250)])
    index = dense_index(store, emb, "c")
    assert index.embedded == 300 and len(index) == 50
    assert index._matrix.shape[0] < 300  # dead rows were squeezed out
    hits = Dense().recall(store, Query("topic3", "c", embedder=emb), 50)
    assert {h.entry.id for h in hits} == {f"c:e{i}" for i in range(250, 300)}


def test_dense_needs_an_embedder():
    for name in ("dense", "hybrid", "recency", "tiered"):
        with pytest.raises(ValueError, match="needs an embedder"):
            RECALLERS.build(name).recall(MemoryStore([entry(1)]), Query("q", "c"), 3)


_ops = st.lists(st.tuples(st.sampled_from(["add", "remove", "replace", "query"]), st.integers(0, 40)),
                max_size=60)


@settings(max_examples=200, deadline=None)
@given(ops=_ops, k=st.integers(1, 10))
def test_incremental_index_equals_brute_force_from_scratch(ops, k):
    store, emb = MemoryStore(), HashingEmbedder(dim=32)
    for op, i in ops:
        eid = f"c:e{i}"
        if op == "add" and eid not in store:
            store.add(entry(i))
        elif op == "remove" and eid in store:
            store.apply(remove=[eid])
        elif op == "replace" and eid in store:
            store.apply(remove=[eid], add=[entry(i, f"replaced text {i * 7}")])
        elif op == "query":
            Dense().recall(store, Query("topic3", "c", embedder=emb), k)  # sync midway
    hits = Dense().recall(store, Query("note topic3", "c", embedder=emb), k)
    entries = store.entries("c")
    if not entries:
        assert hits == []
        return
    scores = emb.embed([e.text for e in entries]) @ emb.embed(["note topic3"], kind="query")[0]
    expected = sorted(scores, reverse=True)[:k]
    assert [h.entry for h in hits] == [store.get(h.entry.id) for h in hits]
    np.testing.assert_allclose([h.score for h in hits], expected, rtol=1e-5, atol=1e-6)
