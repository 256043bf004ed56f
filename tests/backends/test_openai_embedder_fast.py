"""OpenAIEmbedder against a fast endpoint: concurrent batches, base64 vectors, batch sizes that fit.

Every path must give the vectors of the plain one (one batch after another, JSON floats), in order.
"""

from __future__ import annotations

import base64

import httpx
import numpy as np
import pytest

from lyra_lab.backends import OpenAIEmbedder, SimulatedServer, SimulatedSpec
from lyra_lab.backends.simulated import hashed_vectors
from lyra_lab.backends.simulated._embeddings import EmbeddingsRoute

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho".split()


def _texts(n: int) -> list[str]:
    return [f"text {i}: " + " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(i % 13 + 1)) for i in range(n)]


def _embedder(server: SimulatedServer, **kw) -> OpenAIEmbedder:
    return OpenAIEmbedder("sim-e5", base_url=server.base_url, api_key_env=None, passage_prefix="passage: ",
                          max_retries=0, timeout_s=30, **kw)


def _most_in_flight(log) -> int:
    """The most embeddings requests the server held at once (from its log's intervals)."""
    events = sorted([(r.received, 1) for r in log] + [(r.finished, -1) for r in log], key=lambda e: (e[0], e[1]))
    level = most = 0
    for _, step in events:
        level += step
        most = max(most, level)
    return most


def test_concurrent_base64_gives_the_sequential_float_vectors_in_order():
    texts = _texts(700)
    with SimulatedServer(embedding_dim=384, embedding_latency_s=0.02) as server:
        plain = _embedder(server, batch_size=128, max_concurrency=1, encoding_format="float")
        want = plain.embed(texts)
        plain_log = server.log
        server.reset()
        fast = _embedder(server, batch_size=50, max_concurrency=6)
        got = fast.embed(texts)
        fast_log = server.log
    assert np.array_equal(got, want)  # bit for bit, row for row
    np.testing.assert_allclose(want, hashed_vectors(["passage: " + t for t in texts], 384), atol=1e-6)  # in order
    assert {r.params["encoding_format"] for r in plain_log} == {"float"} and _most_in_flight(plain_log) == 1
    assert {r.params["encoding_format"] for r in fast_log} == {"base64"}
    assert len(fast_log) == 14 and _most_in_flight(fast_log) > 1
    assert fast.fallbacks == {"base64_rejected": 0, "batches_split": 0}
    assert fast.usage.calls == 14 and fast.usage.prompt_tokens == plain.usage.prompt_tokens > 0
    assert fast.identity() == plain.identity()  # how the vectors travel is not what they are


def test_a_server_without_base64_gets_floats_and_the_fallback_is_counted():
    texts = _texts(90)
    with SimulatedServer(embedding_dim=32, embedding_base64=False) as server:
        embedder = _embedder(server, batch_size=20, max_concurrency=4)
        got = embedder.embed(texts)
        again = embedder.embed(texts[:5])
        log = server.log
    np.testing.assert_allclose(got, hashed_vectors(["passage: " + t for t in texts], 32), atol=1e-6)
    assert np.array_equal(again, got[:5])
    assert [r.status for r in log[:2]] == [400, 200]  # the first batch alone: rejected, then sent as floats
    assert all(r.status == 200 and r.params["encoding_format"] == "float" for r in log[2:])
    assert embedder.fallbacks["base64_rejected"] == 1 and embedder.encoding_format == "float"


def test_other_client_errors_are_final_without_a_float_retry():
    with SimulatedServer(embedding_dim=8) as server:
        embedder = _embedder(server)
        with pytest.raises(Exception, match="HTTP 400"):
            embedder._request([1, 2])  # noqa: SLF001 - a body the server rejects as invalid, not for its format
        assert len(server.log) == 1 and embedder.fallbacks["base64_rejected"] == 0


def test_a_batch_too_large_for_the_server_is_split_and_the_smaller_size_kept():
    texts = _texts(100)
    with SimulatedServer(embedding_dim=16, embedding_max_batch=20) as server:
        embedder = _embedder(server, batch_size=64, max_concurrency=3)
        got = embedder.embed(texts)
        log = server.log
    np.testing.assert_allclose(got, hashed_vectors(["passage: " + t for t in texts], 16), atol=1e-6)
    assert embedder.batch_size == 16 and embedder.fallbacks["batches_split"] == 2  # 64 -> 32 -> 16
    # 64 and 32 refused, then 16 + 16 + 16 + 16 + 16 + 16 + 4 texts
    assert [r.status for r in log] == [413, 413] + [200] * 7 and embedder.usage.calls == 7


def test_base64_body_holds_the_float32_bytes_of_the_float_body():
    with SimulatedServer(embedding_dim=24) as server:
        body = {"model": "e", "input": ["a cat sat", "dog"]}
        floats = httpx.post(server.base_url + "/embeddings", json=body, timeout=5).json()
        b64 = httpx.post(server.base_url + "/embeddings", json={**body, "encoding_format": "base64"}, timeout=5).json()
        bad = httpx.post(server.base_url + "/embeddings", json={**body, "encoding_format": "int8"}, timeout=5)
    decoded = [np.frombuffer(base64.b64decode(d["embedding"]), "<f4") for d in b64["data"]]
    assert np.array_equal(np.array(decoded), np.array([d["embedding"] for d in floats["data"]], dtype=np.float32))
    assert bad.status_code == 400 and "encoding_format" in bad.json()["error"]["message"]


def test_the_simulated_device_embeds_one_batch_after_another_at_its_rate():
    route = EmbeddingsRoute(SimulatedSpec(embedding_tokens_per_s=1000, embedding_latency_s=0.01))
    assert route._schedule(0.0, 100) == pytest.approx(0.11)  # noqa: SLF001 - the timeline, without sleeping
    assert route._schedule(0.02, 50) == pytest.approx(0.16)  # queued behind the first  # noqa: SLF001
    assert route._schedule(1.0, 10) == pytest.approx(1.02)  # an idle device starts at once  # noqa: SLF001
    assert EmbeddingsRoute(SimulatedSpec(embedding_latency_s=0.5))._schedule(2.0, 10**6) == 2.5  # noqa: SLF001


@pytest.mark.parametrize("fields", [{"embedding_tokens_per_s": 0}, {"embedding_latency_s": -1},
                                    {"embedding_max_batch": 0}])
def test_embedding_spec_rejects_bad_values(fields):
    with pytest.raises(ValueError, match="embedding_"):
        SimulatedSpec(**fields)


def test_embedder_rejects_bad_parameters():
    with pytest.raises(ValueError, match="encoding_format"):
        OpenAIEmbedder("m", api_key_env=None, encoding_format="int8")
    with pytest.raises(ValueError, match="max_concurrency"):
        OpenAIEmbedder("m", api_key_env=None, max_concurrency=0)
