"""BM25 tokenizer options: Snowball stemming (PyStemmer) and 1-character tokens, default unchanged."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from lyra_lab import ConfigError
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import Bm25, Query, RECALLERS, Tokenizer, bm25_index

T0 = datetime(2023, 5, 8, tzinfo=timezone.utc)


def turn(i, text):
    return MemoryEntry(f"c:{i}", "c", "turn", text, (f"t{i}",), ("s1",), T0, T0)


STORE = [turn(1, "Caroline: I have been running every morning"), turn(2, "Mel: we painted 5 birds"),
         turn(3, "Mel: the kids love the beach")]


def test_a_stemmed_query_matches_an_inflected_word_that_the_default_misses():
    store = MemoryStore(STORE)
    assert Bm25().recall(store, Query("how often does she run", "c"), 3) == []
    hits = Bm25(stemmer="english").recall(store, Query("how often does she run", "c"), 3)
    assert [h.entry.id for h in hits] == ["c:1"]


def test_words_tokens_keep_a_single_digit_number():
    store = MemoryStore(STORE)
    assert Tokenizer(tokens="words")(["we painted 5 birds"], return_ids=False) == [["we", "painted", "5", "birds"]]
    assert Tokenizer()(["we painted 5 birds"], return_ids=False) == [["we", "painted", "birds"]]
    hits = Bm25(tokens="words").recall(store, Query("who mentioned 5", "c"), 3)
    assert [h.entry.id for h in hits] == ["c:2"]
    assert Bm25().recall(store, Query("who mentioned 5", "c"), 3) == []


def test_the_stemmer_lowers_and_stems_both_sides():
    assert Tokenizer(stemmer="english")(["Running beaches Painted"], return_ids=False) == [["run", "beach", "paint"]]


def test_each_tokenizer_gets_its_own_index_and_the_default_keeps_its_cache_key():
    store = MemoryStore(STORE)
    Bm25().recall(store, Query("beach", "c"), 3)
    Bm25(stemmer="english").recall(store, Query("beach", "c"), 3)
    assert set(store.cache) == {"recall.bm25:c", "recall.bm25:c:english:words2"}
    assert bm25_index(store, "c").tokenizer == Tokenizer()


def test_unknown_stemmer_or_tokens_is_a_config_error_naming_the_choices():
    with pytest.raises(ConfigError, match=r"^recaller 'bm25': parameter 'stemmer' = 'porter'; "
                                          r"allowed: one of 'none', 'english'$"):
        RECALLERS.build({"name": "bm25", "stemmer": "porter"})
    with pytest.raises(ConfigError, match=r"^recaller 'bm25': parameter 'tokens' = 'chars'; "
                                          r"allowed: one of 'words2', 'words'$"):
        RECALLERS.build({"name": "bm25", "tokens": "chars"})
