"""Hand-computed checks of fusion, decay, BM25 caching and tiers."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from lyra_lab import ConfigError
from lyra_lab.backends import HashingEmbedder
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import Bm25, Hybrid, Query, RECALLERS, Recency, Tiered, bm25_index, rrf_fuse, weighted_fuse

T0 = datetime(2023, 5, 8, tzinfo=timezone.utc)
EMB = HashingEmbedder(dim=128)


def turn(i, text, session="s1", cid="c", days=0.0, kind="turn", level=0, sessions=None):
    t = T0 + timedelta(days=days)
    return MemoryEntry(f"{cid}:{i}", cid, kind, text, (f"t{i}",), tuple(sessions or (session,)), t, t, level)


def test_rrf_hand_computed():
    fused = rrf_fuse([["a", "b", "c"], ["c", "a"]], rrf_k=60)
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert sorted(fused, key=lambda d: -fused[d]) == ["a", "c", "b"]


def test_weighted_fusion_hand_computed():
    fused = weighted_fuse({"a": 0.9, "b": 0.5, "c": 0.1}, {"c": 8.0, "b": 2.0}, weight=0.25)
    # dense minmax: a=1, b=0.5, c=0; bm25 minmax: c=1, b=0, a absent=0
    assert fused == pytest.approx({"a": 0.25, "b": 0.125, "c": 0.75})


def test_hybrid_rrf_ranks_an_entry_found_by_both_lists_first():
    store = MemoryStore([turn(1, "user: my dog is called Rex"), turn(2, "user: pizza tonight"),
                         turn(3, "user: dog dog dog walks"), turn(4, "user: the weather is nice")])
    hits = Hybrid().recall(store, Query("what is my dog called", "c", embedder=EMB), 4)
    assert hits[0].entry.id == "c:1" and hits[0].via == "hybrid-rrf"
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))


def test_recency_decay_hand_computed():
    store = MemoryStore([turn(1, "same words here", days=0), turn(2, "same words here", days=30),
                         turn(3, "same words here", days=60)])
    hits = Recency(half_life_days=30).recall(store, Query("same words here", "c", embedder=EMB, now=T0 + timedelta(days=60)), 3)
    # cosine 1 -> similarity (1 + 1) / 2 = 1; ages 0, 30, 60 days -> 1, 1/2, 1/4
    assert [h.entry.id for h in hits] == ["c:3", "c:2", "c:1"]
    assert [h.score for h in hits] == pytest.approx([1.0, 0.5, 0.25], rel=1e-5)
    # now=None: the latest entry's end is "now"
    again = Recency(half_life_days=30).recall(store, Query("same words here", "c", embedder=EMB), 3)
    assert [h.score for h in again] == pytest.approx([1.0, 0.5, 0.25], rel=1e-5)


def test_bm25_finds_the_lexical_match_and_tokenizes_only_its_conversation_new_entries():
    store = MemoryStore([turn(1, "user: I adopted a cat named Luna"), turn(2, "user: I went hiking"),
                         turn(3, "user: the the the")])
    hits = Bm25().recall(store, Query("Luna the cat", "c"), 5)
    assert [h.entry.id for h in hits] == ["c:1"]  # zero-score entries are not returned
    assert bm25_index(store, "c").tokenized == 3
    store.add(turn(9, "other conversation about Luna", cid="other"))
    assert Bm25().recall(store, Query("Luna", "c"), 5)[0].entry.id == "c:1"
    assert bm25_index(store, "c").tokenized == 3  # another conversation changed: nothing to index
    store.add(turn(4, "user: Luna likes tuna"))
    assert {h.entry.id for h in Bm25().recall(store, Query("Luna", "c"), 5)} == {"c:1", "c:4"}
    assert bm25_index(store, "c").tokenized == 4  # the new entry alone, no rebuild


def test_bm25_on_stopword_only_memory_recalls_nothing():
    store = MemoryStore([turn(1, "the a an"), turn(2, "")])
    assert Bm25().recall(store, Query("the", "c"), 3) == []


def test_tiered_orders_gists_then_sharp_turns_then_recent_turns():
    store = MemoryStore([
        turn(1, "user: we planned the Lisbon trip", session="s1", days=0),
        turn(2, "user: booked flights to Lisbon", session="s1", days=0.1),
        turn(3, "gist: Lisbon trip planning and flights", session="s1", days=0.1, kind="gist", level=1),
        turn(4, "gist: talked about the new job", session="s2", days=5, kind="gist", level=1),
        turn(5, "user: my new job starts Monday", session="s2", days=5),
        turn(6, "user: hello again", session="s3", days=9),
        turn(7, "user: what should I pack", session="s3", days=9.1),
    ])
    hits = Tiered(gists=1, sharp=2, recent=2).recall(store, Query("Lisbon flights", "c", embedder=EMB), 10)
    ids = [h.entry.id for h in hits]
    assert ids[0] == "c:3"  # the best gist of another session
    assert set(ids[1:3]) == {"c:1", "c:2"}  # sharp turns about Lisbon
    assert ids[3:] == ["c:7", "c:6"]  # current session (s3), newest first
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))
    # The current session may be given: then s1's own gist is not "another session"'s.
    given = Tiered(gists=1, sharp=0, recent=1).recall(store, Query("Lisbon", "c", embedder=EMB, session_id="s1"), 5)
    assert [h.entry.id for h in given] == ["c:4", "c:2"]


def test_registry_builds_and_rejects_bad_params():
    assert RECALLERS.build({"name": "tiered", "gists": 2}) == Tiered(gists=2)
    with pytest.raises(ConfigError, match="unknown key"):
        RECALLERS.build({"name": "dense", "k": 3})
    with pytest.raises(ConfigError, match="method"):
        RECALLERS.build({"name": "hybrid", "method": "max"})
    with pytest.raises(ConfigError, match="half_life_days"):
        RECALLERS.build({"name": "recency", "half_life_days": 0})
    with pytest.raises(ValueError, match="k must be"):
        Bm25().recall(MemoryStore(), Query("q", "c"), -1)
