"""Vectors reach the embedding cache batch by batch, and a cached embedder counts what it served."""

from __future__ import annotations

import numpy as np
import pytest

from lyra_lab.backends import CachedEmbedder, EmbeddingCache, EmbeddingCacheStats, HashingEmbedder, report_progress

TEXTS = [f"turn {i}: the plumber comes on day {i % 28 + 1}" for i in range(50)]


class FailsOnBatch:
    """A fake embedder (hashing vectors) that raises on its ``fail_on``-th call, like a crash or a Ctrl-C."""

    def __init__(self, fail_on: int | None, exc: type[BaseException] = RuntimeError):
        self.inner = HashingEmbedder(32)
        self.name, self.dim = self.inner.name, self.inner.dim
        self.fail_on, self.exc = fail_on, exc
        self.batches: list[list[str]] = []

    def identity(self):
        return self.inner.identity()

    def embed(self, texts, kind="passage"):
        self.batches.append(list(texts))
        if len(self.batches) == self.fail_on:
            raise self.exc("injected failure on batch %d" % self.fail_on)
        return self.inner.embed(texts, kind=kind)


@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_batches_finished_before_a_failure_are_in_the_cache(tmp_path, exc):
    path = tmp_path / "emb.sqlite"
    failing = FailsOnBatch(fail_on=3, exc=exc)
    with EmbeddingCache(path) as cache, pytest.raises(exc, match="batch 3"):
        CachedEmbedder(failing, cache, write_every=8).embed(TEXTS)
    assert [len(b) for b in failing.batches] == [8, 8, 8]
    with EmbeddingCache(path) as cache:
        assert len(cache) == 16  # the two batches that finished, nothing of the third
        again = FailsOnBatch(fail_on=None)
        cached = CachedEmbedder(again, cache, write_every=8)
        out = cached.embed(TEXTS)
    finished = set(sum(failing.batches[:2], []))  # misses go shortest first: the two batches that finished
    assert len(finished) == 16 and sum(again.batches, []) == sorted((t for t in TEXTS if t not in finished), key=len)
    # only what was lost is embedded again
    np.testing.assert_array_equal(out, HashingEmbedder(32).embed(TEXTS))
    assert (cached.hits, cached.misses) == (16, 34)


def test_a_batch_closes_at_its_character_budget_and_a_long_text_goes_alone():
    long = "x" * 500
    fake = FailsOnBatch(fail_on=None)
    CachedEmbedder(fake, EmbeddingCache(":memory:"), write_every=10, write_chars=100).embed(
        ["a" * 40, "b" * 40, "c" * 40, long, "d"])
    # shortest first, then cut at the budget; the long text alone
    assert [[t[0] for t in b] for b in fake.batches] == [["d", "a", "b"], ["c"], ["x"]]


def test_stats_count_hits_misses_characters_and_time():
    cached = CachedEmbedder(HashingEmbedder(16), EmbeddingCache(":memory:"))
    assert cached.stats() == EmbeddingCacheStats("hashing-16")
    cached.embed(["one", "two", "one"])
    cached.embed(["two", "three"])
    stats = cached.stats()
    assert (stats.embedder, stats.hits, stats.misses, stats.embedded_chars) == ("hashing-16", 2, 3, 11)
    assert stats.embed_s > 0 and stats.fields()["misses"] == 3


def test_progress_of_the_misses_reaches_the_sink_once_per_batch_and_at_the_end():
    events = []
    cached = CachedEmbedder(HashingEmbedder(16), EmbeddingCache(":memory:"), write_every=20)
    cached.embed(TEXTS[:10])  # 10 hits later
    with report_progress(events.append, every_s=0):
        cached.embed(TEXTS)
    assert [(e.done, e.total, e.finished) for e in events] == [(20, 40, False), (40, 40, False), (40, 40, True)]
    assert events[0].task == "embed passages: hashing-16" and events[0].unit == "text"
    assert events[-1].rate > 0 and events[0].eta_s is not None


def test_an_all_hits_call_reports_no_progress():
    events = []
    cached = CachedEmbedder(HashingEmbedder(16), EmbeddingCache(":memory:"))
    cached.embed(TEXTS)
    with report_progress(events.append, every_s=0):
        cached.embed(TEXTS)
    assert events == []
