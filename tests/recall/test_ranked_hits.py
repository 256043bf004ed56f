"""``ranked_hits``: ``recall``'s hits built only as they are read, and equal to them however they are read."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from lyra_lab.backends import HashingEmbedder
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import RECALLERS, Hit, RankedHits
from lyra_lab.recall._ranking import hits_of
from lyra_lab.testing import memory_stores

EMBEDDER = HashingEmbedder(dim=32)
SPECS = [{"name": "dense"}, {"name": "bm25"}, {"name": "hybrid"}, {"name": "recency"}, {"name": "reference"},
         {"name": "tiered"}]
_queries = st.sampled_from(["Caroline", "what did she say", "the", "", "topic session turn"])


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s["name"])
@settings(max_examples=40, deadline=None)
@given(drawn=memory_stores(), query=_queries, k=st.integers(0, 20))
def test_ranked_hits_equal_recall(spec, drawn, query, k):
    store, cid = drawn
    recaller = RECALLERS.build(spec)
    lazy = recaller.ranked_hits(store, query, k, conversation_id=cid, embedder=EMBEDDER)
    eager = recaller.recall(store, query, k, conversation_id=cid, embedder=EMBEDDER)
    assert lazy == eager and list(lazy) == eager and len(lazy) == len(eager)
    assert [lazy[i] for i in range(len(lazy))] == eager


def test_index_rankings_stay_unbuilt_and_own_recalls_are_called(monkeypatch):
    store, cid = MemoryStore(_entries(4)), "c"
    lazy = RECALLERS.build({"name": "dense"}).ranked_hits(store, "Caroline", 5, conversation_id=cid,
                                                          embedder=EMBEDDER)
    assert isinstance(lazy, RankedHits) and len(lazy) == 4
    # tiered has its own recall (a session argument): that is what answers
    tiered = RECALLERS.build({"name": "tiered"})
    called = []
    monkeypatch.setattr(type(tiered), "recall", lambda self, *a, **kw: called.append(a) or [])
    assert tiered.ranked_hits(store, "Caroline", 5, conversation_id=cid, embedder=EMBEDDER) == [] and called


def _entries(n):
    return [MemoryEntry(id=f"e{i}", conversation_id="c", kind="turn", text=f"t{i}", turn_ids=(f"t{i}",))
            for i in range(n)]


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 8), start=st.none() | st.integers(-10, 10), stop=st.none() | st.integers(-10, 10),
       step=st.none() | st.sampled_from([1, 2, -1]), index=st.integers(-10, 10))
def test_ranked_hits_read_as_the_tuple_of_their_hits(n, start, stop, step, index):
    entries, scores = _entries(n), [1.0 - i / 10 for i in range(n)]
    lazy, hits = RankedHits(entries, scores, "dense"), tuple(hits_of(entries, scores, "dense"))
    assert lazy == hits and hits == lazy and tuple(lazy) == hits
    assert lazy[start:stop:step] == hits[start:stop:step]  # a slice keeps the hits' ranks
    assert lazy[start:stop][1:] == hits[start:stop][1:]
    if -n <= index < n:
        assert lazy[index] == hits[index]
    else:
        with pytest.raises(IndexError):
            lazy[index]


def test_ranked_hits_are_built_when_read():
    entries = _entries(3)
    lazy = RankedHits(entries, [0.5, 0.25, 0.125], "bm25")
    assert lazy[2] == Hit(entries[2], 0.125, 2, "bm25") and lazy != (Hit(entries[0], 0.5, 0, "bm25"),)
    assert hash(lazy) == hash(tuple(lazy))
    with pytest.raises(ValueError, match="one score per entry"):
        RankedHits(entries, [0.5], "bm25")
