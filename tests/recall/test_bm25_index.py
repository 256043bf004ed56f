"""The incremental BM25 index scores exactly as ``bm25s`` does on the same live corpus."""

from __future__ import annotations

import bm25s
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import Bm25, Query, bm25_index
from lyra_lab.recall._bm25 import STOPWORDS
from lyra_lab.recall._index import top_k

WORDS = ["cat", "dog", "Luna", "tuna", "the", "a", "of", "hiking", "Lisbon", "cello", "sister", "job", "and", "is", "trip", "flight", "x", "yz"]


def entry(i: int, words: list[str], cid: str = "c") -> MemoryEntry:
    return MemoryEntry(f"{cid}:e{i}", cid, "turn", " ".join(words), (f"t{i}",))


def bm25s_scores(store: MemoryStore, query: str) -> np.ndarray:
    """The reference: a fresh bm25s index over the conversation's live entries (bm25s defaults)."""
    texts = [e.text for e in store.entries("c")]
    corpus = bm25s.tokenize(texts, stopwords=STOPWORDS, return_ids=True, show_progress=False)
    query_tokens = bm25s.tokenize([query], stopwords=STOPWORDS, return_ids=False, show_progress=False)[0]
    if not corpus.vocab or not query_tokens:
        return np.zeros(len(texts))
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    return np.asarray(retriever.get_scores(query_tokens), dtype=np.float64)


_text = st.lists(st.sampled_from(WORDS), max_size=12)
_ops = st.lists(st.tuples(st.sampled_from(["add", "remove", "replace", "query"]), st.integers(0, 30), _text),
                max_size=80)


@settings(max_examples=300, deadline=None)
@given(ops=_ops, query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), k=st.integers(1, 12))
def test_incremental_scores_and_rankings_equal_bm25s_from_scratch(ops, query, k):
    store = MemoryStore()
    for op, i, words in ops:
        eid = f"c:e{i}"
        if op == "add" and eid not in store:
            store.add([entry(i, words)] + ([] if f"other:e{i}" in store else [entry(i, words, cid="other")]))
        elif op == "remove" and eid in store:
            store.apply(remove=[eid])
        elif op == "replace" and eid in store:
            store.apply(remove=[eid], add=[entry(i, words)])
        elif op == "query":
            bm25_index(store, "c").scores(" ".join(words))  # sync midway
    q = " ".join(query)
    index = bm25_index(store, "c")
    rows = index.live_rows()
    assert [index.entry(r) for r in rows] == store.entries("c")  # rows follow store order
    mine = index.scores(q)[rows].astype(np.float64)
    expected = bm25s_scores(store, q)
    np.testing.assert_allclose(mine, expected, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(mine, expected)  # same float32 arithmetic: bit for bit
    hits = Bm25().recall(store, Query(q, "c"), k)
    positive = np.flatnonzero(expected > 0)
    ref = [store.entries("c")[i].id for i in positive[top_k(expected[positive], k)]]
    assert [h.entry.id for h in hits] == ref


def test_many_removals_compact_the_postings():
    store = MemoryStore([entry(i, ["cat", f"w{i}", "dog" if i % 2 else "tuna"]) for i in range(300)])
    index = bm25_index(store, "c")
    store.apply(remove=[f"c:e{i}" for i in range(250)])
    index = bm25_index(store, "c")
    assert len(index) == 50 and len(index._entries) == 50 and index.tokenized == 300
    np.testing.assert_array_equal(index.scores("cat dog w260").astype(np.float64),
                                  bm25s_scores(store, "cat dog w260"))


def test_larger_random_corpus_matches_bm25s():
    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(400)]
    lengths = rng.integers(0, 40, size=2000)
    store = MemoryStore([entry(i, list(rng.choice(vocab, size=n, p=None))) for i, n in enumerate(lengths)])
    bm25_index(store, "c")
    store.add([entry(5000 + i, list(rng.choice(vocab, size=9))) for i in range(5)])
    store.apply(remove=[f"c:e{i}" for i in range(0, 2000, 7)])
    for q in ("w1 w2 w3", "w399 w0 w0", "w17"):
        index = bm25_index(store, "c")
        mine = index.scores(q)[index.live_rows()].astype(np.float64)
        ref = bm25s_scores(store, q)
        np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-6)
        assert np.array_equal(np.argsort(-mine, kind="stable"), np.argsort(-ref, kind="stable"))
