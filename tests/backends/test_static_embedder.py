"""The static embedder: WordLlama's token table from inside its wheel, with no network at all."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from lyra_lab.backends import StaticEmbedder, make_embedder

pytest.importorskip("wordllama")


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the static embedder tried the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def test_it_loads_from_the_wheel_without_the_network(no_network):
    embedder = make_embedder("wordllama")
    assert isinstance(embedder, StaticEmbedder) and embedder.dim == 256
    vectors = embedder.embed(["Alice adopted a cat named Miso.", "", "The tax deadline is in April."])
    assert vectors.shape == (3, 256) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors[[0, 2]], axis=1), 1.0, atol=1e-5)
    assert not vectors[1].any()  # an empty text has no tokens: a zero row


def test_similar_texts_land_closer(no_network):
    embedder = StaticEmbedder()
    cat, kitten, tax = embedder.embed(["my cat sleeps on the sofa", "the kitten naps on the couch",
                                       "file the income tax return"])
    assert cat @ kitten > cat @ tax + 0.1


def test_a_long_text_is_the_mean_of_all_its_tokens_without_padding_the_batch(no_network):
    embedder = StaticEmbedder(dim=64, batch_size=3)
    long = "the plumber fixed the boiler on Tuesday " * 20_000  # ~160k tokens beside short texts
    texts = ["short one", long, "another short one", "x"]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([t]) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-6)


def test_dims_and_identity():
    assert make_embedder({"name": "wordllama", "dim": 128}).identity() == {
        "embedder": "wordllama/l2_supercat-128", "dim": 128,
        "wordllama": __import__("importlib.metadata").metadata.version("wordllama")}
    with pytest.raises(Exception, match="dim must be 64, 128 or 256"):
        make_embedder({"name": "wordllama", "dim": 100})
