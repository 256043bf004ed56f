"""The reference recaller stage by stage, with hand-computed scores on a fake embedder."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest

from lyra_lab import ConfigError
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import Bm25, Query, RECALLERS, Reference

MAY = datetime(2023, 5, 8, tzinfo=timezone.utc)
JUNE = datetime(2023, 6, 20, tzinfo=timezone.utc)


class FakeEmbedder:
    """Fixed unit vectors by text (a query or key not listed embeds as [0, 0, 1])."""

    name = "fake-lookup"
    dim = 3

    def __init__(self, table):
        self.table = table

    def embed(self, texts, kind="passage"):
        return np.array([self.table.get(t, [0.0, 0.0, 1.0]) for t in texts], dtype=np.float32)


OFF = {"keys": "text", "window": 0, "lexical_keys": None, "lexical_window": None, "neighbours": 0.0,
       "session_weight": 0.0, "speaker_weight": 0.0}


def staged(**params):
    """The reference recaller with every stage off except those given (the defaults switch several on)."""
    return Reference(**{**OFF, **params})


def turn(i, text, session="s1", when=MAY):
    return MemoryEntry(f"c:{i}", "c", "turn", text, (f"t{i}",), (session,), when, when)


def test_weight_zero_is_stemmed_bm25_and_needs_no_embedder():
    store = MemoryStore([turn(1, "A: we went running"), turn(2, "B: nice run today, running again"),
                         turn(3, "A: pizza")])
    ref = staged(weight=0.0).recall(store, Query("who runs", "c"), 3)
    bm25 = Bm25(stemmer="english", tokens="words").recall(store, Query("who runs", "c"), 3)
    assert [h.entry.id for h in ref[:2]] == [h.entry.id for h in bm25] == ["c:2", "c:1"]
    assert ref[0].score == pytest.approx(1.0) and ref[-1].score == pytest.approx(0.0)  # min-max of BM25
    assert ref[0].entry is store.get("c:2") and ref[0].via == "reference"


def test_dense_and_lexical_scores_are_fused_with_the_weight():
    store = MemoryStore([turn(1, "A: hello"), turn(2, "B: zebra"), turn(3, "A: zebra zebra stripes")])
    emb = FakeEmbedder({"A: hello": [1, 0, 0], "B: zebra": [0.6, 0.8, 0], "A: zebra zebra stripes": [0, 1, 0],
                        "zebra": [1, 0, 0]})
    hits = staged(weight=0.25).recall(store, Query("zebra", "c", embedder=emb), 3)
    # cosines 1, 0.6, 0 -> min-max 1, 0.6, 0.  BM25 (k1 1.5, b .75) after the stopword "a": lengths
    # 1 (hello), 2 (b zebra), 3 (zebra zebra stripe), avg 2; both zebra turns share idf, so min-max BM25 is
    # 0, tfc2/tfc3, 1 with tfc2 = 1/(1.5*(.25+.75*1)+1) = .4 and tfc3 = 2/(1.5*(.25+.75*1.5)+2) = 2/4.0625
    lex2 = 0.4 / (2 / 4.0625)  # 0.8125
    expected = {"c:1": 0.25 * 1.0, "c:2": 0.25 * 0.6 + 0.75 * lex2, "c:3": 0.75 * 1.0}
    assert {h.entry.id: h.score for h in hits} == pytest.approx(expected, rel=1e-5)
    assert [h.entry.id for h in hits] == ["c:2", "c:3", "c:1"]


def test_neighbours_add_the_better_same_session_neighbour_score():
    store = MemoryStore([turn(1, "A: what pet do you have?"), turn(2, "B: a cat named Luna"),
                         turn(3, "A: fun"), turn(4, "B: zzz", session="s2")])
    plain = staged(weight=0.0).recall(store, Query("what pet", "c"), 4)
    assert [h.entry.id for h in plain if h.score > 0] == ["c:1"]
    hits = staged(weight=0.0, neighbours=0.5).recall(store, Query("what pet", "c"), 4)
    # min-max BM25: turn 1 is 1, the rest 0; turn 2 (and 3's neighbour 2 is 0) gains 0.5 * 1
    assert {h.entry.id: h.score for h in hits} == pytest.approx({"c:1": 1.0, "c:2": 0.5, "c:3": 0.0, "c:4": 0.0})


def test_two_stage_keeps_only_the_best_sessions_turns():
    store = MemoryStore([turn(1, "A: cats and dogs", "s1"), turn(2, "B: dogs", "s1"), turn(3, "A: cats", "s2"),
                         turn(4, "B: more cats, cats everywhere", "s2")])
    hits = staged(weight=0.0, sessions=1).recall(store, Query("cats", "c"), 4)
    # session s2 holds three "cats" to s1's one, so only s2's turns come back
    assert {h.entry.id for h in hits} == {"c:3", "c:4"} and len(hits) == 2
    blended = staged(weight=0.0, session_weight=1.0).recall(store, Query("cats", "c"), 4)
    assert {h.entry.id for h in blended[:2]} == {"c:3", "c:4"} and len(blended) == 4


def test_a_named_month_lifts_the_turns_of_that_session():
    store = MemoryStore([turn(1, "A: we went camping", "s1", MAY), turn(2, "A: we went camping", "s2", JUNE)])
    plain = staged(weight=0.0).recall(store, Query("camping in June 2023", "c"), 2)
    assert [h.entry.id for h in plain] == ["c:1", "c:2"]  # a tie: store order
    timed = staged(weight=0.0, time_weight=0.5).recall(store, Query("camping in June 2023", "c"), 2)
    # equal BM25 scores min-max to 0; June 20 is inside June, May 8 is 24 days before it
    assert [h.entry.id for h in timed] == ["c:2", "c:1"]
    assert [h.score for h in timed] == pytest.approx([0.5, 0.5 * np.exp(-24 / 14)])


def test_dated_window_keys_are_what_gets_indexed():
    store = MemoryStore([turn(1, "A: guess where I went in May"), turn(2, "B: Paris!")])
    hits = staged(keys="dated", window=1, weight=0.0).recall(store, Query("2023 Paris", "c"), 2)
    assert [h.entry.text for h in hits] == ["A: guess where I went in May", "B: Paris!"]  # originals returned
    assert store.cache["recall.keys:dated:1:c"].store.get("c:1").text == (
        "[8 May 2023] A: guess where I went in May\n[8 May 2023] B: Paris!")


def test_dense_use_needs_an_embedder_and_bad_parameters_are_config_errors():
    store = MemoryStore([turn(1, "A: hi")])
    with pytest.raises(ValueError, match="needs an embedder"):
        Reference().recall(store, Query("hi", "c"), 1)
    assert Reference(weight=0.0).recall(store, Query("hi", "c"), 0) == []
    for bad in ({"weight": 1.5}, {"fusion": "max"}, {"window": -1}, {"keys": "facts"}, {"sessions": 1.5},
                {"neighbours": -0.1}):
        with pytest.raises(ConfigError):
            RECALLERS.build({"name": "reference", **bad})


def test_a_named_speaker_lifts_that_speakers_turns():
    store = MemoryStore([turn(1, "Mel: I love pottery"), turn(2, "Caroline: I love pottery too"),
                         turn(3, "[2023-05-08 13:56] Caroline: and painting\nMel: nice")])
    def scores(weight):
        hits = staged(weight=0.0, speaker_weight=weight).recall(store, Query("What does Caroline love?", "c"), 3)
        return {h.entry.id: h.score for h in hits}

    plain, boosted = scores(0.0), scores(0.5)
    # Caroline speaks in turns 2 and 3 (in 3 after a date prefix, as chunk text renders it): each gains 0.5
    assert {i: boosted[i] - plain[i] for i in plain} == pytest.approx({"c:1": 0.0, "c:2": 0.5, "c:3": 0.5})


def test_the_defaults_embed_plain_turns_and_index_dated_two_neighbour_keys_for_bm25():
    store = MemoryStore([turn(i, f"A: line {i}") for i in range(1, 5)])
    emb = FakeEmbedder({})
    Reference().recall(store, Query("line 2", "c", embedder=emb), 2)
    assert store.cache["recall.keys:text:0:c"].store.get("c:1").text == "A: line 1"
    assert store.cache["recall.keys:dated:2:c"].store.get("c:1").text == (
        "[8 May 2023] A: line 1\n[8 May 2023] A: line 2\n[8 May 2023] A: line 3")


def test_the_dense_session_stage_scores_each_session_by_its_mean_vector():
    store = MemoryStore([turn(1, "A: one", "s1"), turn(2, "B: two", "s1"), turn(3, "A: three", "s2"),
                         turn(4, "B: four", "s2")])
    emb = FakeEmbedder({"A: one": [1, 0, 0], "B: two": [0, 1, 0], "A: three": [0, 1, 0],
                        "B: four": [0.6, 0.8, 0], "q": [0, 1, 0]})
    # turn cosines 0, 1, 1, 0.8: alone, the tie at 1 goes to the earlier turn 2
    assert [h.entry.id for h in staged(weight=1.0).recall(store, Query("q", "c", embedder=emb), 2)] == [
        "c:2", "c:3"]
    # session means: s1 (1, 1, 0)/sqrt(2) -> cos 0.70711; s2 (0.6, 1.8, 0)/|.| -> 1.8/sqrt(3.6) = 0.94868
    hits = staged(weight=1.0, sessions=1).recall(store, Query("q", "c", embedder=emb), 4)
    assert [h.entry.id for h in hits] == ["c:3", "c:4"]
