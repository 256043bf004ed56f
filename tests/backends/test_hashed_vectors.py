"""``hashed_vectors`` (bincount over memoized feature hashes) equals the one-feature-at-a-time definition."""

from __future__ import annotations

import hashlib
import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab.backends.simulated._behaviour import hashed_vectors


def reference(texts, dim):
    """The definition: each word uni-/bigram adds +-1 (its hash's top bit) to bin hash % dim, then unit length."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for row, text in enumerate(texts):
        words = [w.lower() for w in re.findall(r"\w+", text)]
        for feature in words + [a + " " + b for a, b in zip(words, words[1:])]:
            h = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
            out[row, h % dim] += 1.0 if (h >> 63) & 1 else -1.0
        norm = np.linalg.norm(out[row])
        if norm > 0:
            out[row] /= norm
    return out


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(alphabet="ab cé日 Z9", max_size=60), max_size=5), st.sampled_from([1, 2, 8, 64]))
def test_bit_identical_to_the_definition(texts, dim):
    assert hashed_vectors(texts, dim).tobytes() == reference(texts, dim).tobytes()


def test_the_feature_hash_memo_stays_bounded(monkeypatch):
    from lyra_lab.backends.simulated import _behaviour

    monkeypatch.setattr(_behaviour._FeatureHashes, "MAX", 3)
    texts = ["a b c d e f", "g h a b", "Ünïcode wörds"]
    assert hashed_vectors(texts, 16).tobytes() == reference(texts, 16).tobytes()
    assert len(_behaviour._feature_hash.__self__) <= 3  # type: ignore[attr-defined]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab cé日 Z9", max_size=200), st.sampled_from([1, 2, 8, 64, 256]))
def test_one_text_is_bit_identical_to_the_definition(text, dim):
    assert hashed_vectors([text], dim).tobytes() == reference([text], dim).tobytes()


def test_one_text_with_counts_past_float32s_exact_integers_is_still_the_definition():
    # "e" and "e e" both add -1 to bin 0 of 2: 2,049 + 2,048 of them, their squares past 2**24
    text = "e " * 2049
    assert hashed_vectors([text], 2).tobytes() == reference([text], 2).tobytes()
