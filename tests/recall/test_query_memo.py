"""What a ``Query`` remembers (its vector, each index's scores) and the BM25 term shares never change a ranking."""

from __future__ import annotations

import bm25s
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lyra_lab.backends import HashingEmbedder
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import (RECALLERS, Bm25, Dense, Hit, Query, Tokenizer, bm25_index, dense_index, keyed_view,
                             rrf_fuse, weighted_fuse)
from lyra_lab.recall._base import ranked
from lyra_lab.recall._bm25 import STOPWORDS, _stemmer
from lyra_lab.recall import _index
from lyra_lab.recall._index import best_first, top_k
from lyra_lab.recall._ranking import Ranking
from lyra_lab.testing import memory_stores

EMBEDDER = HashingEmbedder(dim=32)
SPECS = [{"name": "dense"}, {"name": "bm25"}, {"name": "hybrid"}, {"name": "hybrid", "candidates": 2},
         {"name": "hybrid", "method": "weighted", "weight": 0.3, "candidates": 3}, {"name": "recency"},
         {"name": "reference"}, {"name": "reference", "fusion": "rrf", "sessions": 1}, {"name": "tiered"}]
_queries = st.sampled_from(["Caroline", "what did she say", "the", "", "topic session turn", "x"])
# few distinct values: many ties, and the odd NaN, infinity and signed zero
_scores = st.lists(st.sampled_from([0.0, -0.0, 0.5, 0.5, 1.0, -1.0, np.inf, -np.inf, np.nan, 0.25]), max_size=40)


@pytest.mark.parametrize("full_sort_max", [-1, 1024], ids=["partition", "full sort"])
@settings(max_examples=300, deadline=None)
@given(scores=_scores, k=st.integers(0, 45), deeper=st.integers(0, 45))
def test_top_k_is_a_prefix_of_every_deeper_top_k_and_of_one_stable_sort(full_sort_max, scores, k, deeper):
    array = np.array(scores, dtype=np.float32)
    k, deeper = sorted((k, deeper))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_index, "FULL_SORT_MAX", full_sort_max)
        assert top_k(array, k).tolist() == top_k(array, deeper)[:k].tolist()
        assert top_k(array, deeper).tolist() == np.argsort(-array, kind="stable")[:deeper].tolist()
        assert len(best_first(array, k)) >= min(k, len(array))


def _fresh(store: MemoryStore) -> MemoryStore:
    """The same entries in a new store: new indexes, nothing remembered."""
    return MemoryStore(list(store))


@pytest.mark.parametrize("spec", SPECS, ids=str)
@settings(max_examples=60, deadline=None)
@given(drawn=memory_stores(), asks=st.lists(st.tuples(_queries, st.integers(0, 12)), min_size=1, max_size=6))
def test_rankings_from_a_remembering_query_equal_those_of_a_fresh_one(spec, drawn, asks):
    store, cid = drawn
    recaller, dense = RECALLERS.build(spec), Dense()
    for text, k in asks:
        query = Query(text, cid, embedder=EMBEDDER)
        dense.recall(store, query, 3)  # another recaller asked the same query first
        recaller.recall(store, query, 40)  # and a deeper ranking of it
        warm = recaller.recall(store, query, k)
        assert warm == recaller.recall(_fresh(store), Query(text, cid, embedder=EMBEDDER), k)


def _fusion(store, query, n, cid, hybrid):
    """Dense's and BM25's top-n hits fused by id, stable sort: ``[(doc id, score)]`` and the entries by id."""
    dense = Dense().recall(store, Query(query, cid, embedder=EMBEDDER), n)
    lexical = Bm25().recall(store, Query(query, cid), n)
    by_id = {h.entry.id: h.entry for h in [*dense, *lexical]}
    if hybrid.method == "rrf":
        fused = rrf_fuse([[h.entry.id for h in dense], [h.entry.id for h in lexical]], hybrid.rrf_k)
    else:
        fused = weighted_fuse({h.entry.id: h.score for h in dense}, {h.entry.id: h.score for h in lexical},
                              hybrid.weight)
    return [(doc, fused[doc]) for doc in sorted(by_id, key=lambda doc: -fused[doc])], by_id


def _fused_hits(store, query, k, cid, hybrid):
    """Hybrid by its definition: the fusion of each list's top ``candidates``, then the other entries as the
    complete lists fuse them, cut at k."""
    first, by_id = _fusion(store, query, hybrid.candidates, cid, hybrid)
    everything, all_by_id = _fusion(store, query, len(store.entries(cid)), cid, hybrid)
    placed = {doc for doc, _ in first}
    order = (first + [(doc, score) for doc, score in everything if doc not in placed])[:k]
    return [Hit({**all_by_id, **by_id}[d], score, rank, hybrid.via) for rank, (d, score) in enumerate(order)]


@pytest.mark.parametrize("spec", [spec for spec in SPECS if spec["name"] == "hybrid"], ids=str)
@settings(max_examples=100, deadline=None)
@given(drawn=memory_stores(), query=_queries, k=st.integers(1, 12))
def test_hybrid_fuses_exactly_as_rrf_fuse_and_weighted_fuse_do(spec, drawn, query, k):
    store, cid = drawn
    hybrid = RECALLERS.build(spec)
    expected = _fused_hits(_fresh(store), query, k, cid, hybrid)
    assert hybrid.recall(store, Query(query, cid, embedder=EMBEDDER), k) == expected


def test_a_query_computes_its_vector_and_scores_once_and_a_new_query_again():
    store = MemoryStore([MemoryEntry(f"e{i}", "c", "turn", f"Caroline: note {i} about cats", (f"t{i}",), ("s1",))
                         for i in range(6)])

    class Counting(HashingEmbedder):
        queries = 0

        def embed(self, texts, kind="passage"):
            if kind == "query":
                Counting.queries += len(texts)
            return super().embed(texts, kind=kind)

    embedder = Counting(dim=32)
    query = Query("cats", "c", embedder=embedder)
    for k in (1, 3, 6):
        RECALLERS.build("reference").recall(store, query, k)
        RECALLERS.build("hybrid").recall(store, query, k)
    assert Counting.queries == 1  # one vector for every recall of the query
    RECALLERS.build("reference").recall(store, Query("cats", "c", embedder=embedder), 3)
    assert Counting.queries == 2  # a new query pays for its own
    view = keyed_view(store, "c", "dated", 2)
    lexical = bm25_index(view.store, "c", Tokenizer("english", "words"))
    dense = dense_index(store, embedder, "c")
    vector = embedder.embed(["cats"], kind="query")[0]
    assert lexical.scores("cats") is not lexical.scores("cats")  # an index remembers no query
    np.testing.assert_array_equal(dense.scores(vector)[1], dense.scores(vector)[1])


def test_bm25_term_shares_are_recomputed_after_the_index_changes():
    store = MemoryStore([MemoryEntry("a", "c", "turn", "cello lessons", ("a",)),
                         MemoryEntry("b", "c", "turn", "hiking trip", ("b",))])
    before = bm25_index(store, "c").scores("cello").copy()
    store.add([MemoryEntry("x", "c", "turn", "cello cello concert", ("x",))])  # IDF and mean length change
    after = bm25_index(store, "c").scores("cello")
    assert after[0] != before[0]
    np.testing.assert_array_equal(after, bm25_index(_fresh(store), "c").scores("cello"))


def test_ranked_takes_a_ranking_as_it_is_and_pairs_as_ever():
    entries = [MemoryEntry(i, "c", "turn", i, ()) for i in "abc"]
    ranking = Ranking(entries, [3.0, 2.0, 1.0])
    assert ranked(ranking, 2, "x") == ranked(list(ranking), 2, "x") == [Hit(entries[0], 3.0, 0, "x"),
                                                                       Hit(entries[1], 2.0, 1, "x")]
    assert ranked(ranking, 0, "x") == []
    with pytest.raises(ValueError, match="one score per entry"):
        Ranking(entries, [1.0])


@pytest.mark.parametrize("stemmer", ["none", "english"])
@pytest.mark.parametrize("tokens", ["words2", "words"])
@settings(max_examples=200, deadline=None)
@given(text=st.one_of(st.text(max_size=60), st.sampled_from(["İstanbul ŞEHİR straße", "I ran 5 km, the cats RAN",
                                                              "don't won't x_y 3.14", "the a of and is", ""])))
def test_query_tokens_are_bm25s_tokens(stemmer, tokens, text):
    expected = bm25s.tokenize([text], stopwords=STOPWORDS, return_ids=False, show_progress=False,
                              token_pattern=r"(?u)\b\w\w+\b" if tokens == "words2" else r"(?u)\b\w+\b",
                              stemmer=_stemmer(stemmer))[0]
    assert Tokenizer(stemmer, tokens).query(text) == expected
