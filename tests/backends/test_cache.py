"""ResponseCache and CachedBackend: a hit makes no request and replays the original figures."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
import sqlite3

import pytest

from lyra_lab.backends import (BackendConfig, BackendError, CachedBackend, FakeLLM, OpenAIBackend,
                               ResponseCache, SimulatedServer, cache_key, make_backend)

MESSAGES = [{"role": "user", "content": "Dana repaints the fence every May. The paint is always green."}]


@pytest.fixture(scope="module")
def server():
    with SimulatedServer(latency_s=0.01) as srv:
        yield srv


@pytest.fixture
def sim(server):
    server.reset()
    return server


def _backend(server, **fields):
    return OpenAIBackend(BackendConfig(**{"name": "simulated", "base_url": server.base_url, "model": "sim",
                                          "simulated": True, "max_attempts": 1, **fields}))


def test_a_hit_makes_no_request_and_reports_the_original_usage(sim, tmp_path):
    with ResponseCache(tmp_path / "responses.sqlite") as cache:
        backend = CachedBackend(_backend(sim, price_in_per_m=1.0, price_out_per_m=2.0), cache)
        first = backend.complete(MESSAGES, max_tokens=6)
        assert sim.request_count == 1
        second = backend.complete(MESSAGES, max_tokens=6)
        assert sim.request_count == 1  # answered from the cache
        assert (first.cached, second.cached) == (False, True)
        assert second.text == first.text
        assert (second.usage.prompt_tokens, second.usage.completion_tokens, second.usage.cost_usd) == \
               (first.usage.prompt_tokens, first.usage.completion_tokens, first.usage.cost_usd)
        assert second.usage.cached_calls == 1 and second.usage.calls == 1
        assert (second.latency_s, second.ttft_s) == (first.latency_s, first.ttft_s)
        assert (second.backend, second.model, second.simulated) == \
               (first.backend, first.model, first.simulated)
        assert cache.stats() == {"hits": 1, "misses": 1, "entries": 1}


def test_other_params_messages_or_models_miss(sim, tmp_path):
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        CachedBackend(_backend(sim), cache).complete(MESSAGES, max_tokens=6)
        CachedBackend(_backend(sim), cache).complete(MESSAGES, max_tokens=7)
        CachedBackend(_backend(sim), cache).complete([{"role": "user", "content": "Other."}], max_tokens=6)
        CachedBackend(_backend(sim, model="sim-2"), cache).complete(MESSAGES, max_tokens=6)
        CachedBackend(_backend(sim, params={"temperature": 0.7}), cache).complete(MESSAGES, max_tokens=6)
        assert sim.request_count == 5 and cache.misses == 5 and len(cache) == 5
        # a timeout does not change the answer: same key
        CachedBackend(_backend(sim), cache).complete(MESSAGES, max_tokens=6, timeout=3)
        assert sim.request_count == 5 and cache.hits == 1


def test_the_cache_survives_reopening(sim, tmp_path):
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        original = CachedBackend(_backend(sim), cache).complete(MESSAGES)
    with ResponseCache(path) as cache:
        again = CachedBackend(_backend(sim), cache).complete(MESSAGES)
    assert sim.request_count == 1
    assert again.cached and again.text == original.text


def test_failures_are_not_cached(sim, tmp_path):
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        backend = CachedBackend(_backend(sim), cache)
        sim.enqueue("400")
        with pytest.raises(BackendError):
            backend.complete(MESSAGES)
        backend.complete(MESSAGES)
        assert sim.request_count == 2 and len(cache) == 1


def test_shared_by_a_thread_pool(tmp_path):
    batch = [[{"role": "user", "content": f"Note {i % 5}."}] for i in range(30)]
    with SimulatedServer(latency_s=0.02) as server, ResponseCache(tmp_path / "c.sqlite") as cache:
        backend = CachedBackend(_backend(server, max_concurrency=4), cache)
        with ThreadPoolExecutor(max_workers=4) as pool:
            first = list(pool.map(backend.complete, batch))
            requests_after_first = server.request_count
            second = list(pool.map(backend.complete, batch))
        assert server.request_count == requests_after_first  # every answer came from the cache
        assert len(cache) == 5
        assert (cache.misses, cache.hits) == (5, 55)
    assert requests_after_first == 5  # duplicates in flight together waited for one answer
    assert [c.text for c in first] == [c.text for c in second] == [f"Note {i % 5}." for i in range(30)]
    assert all(c.cached for c in second)
    with sqlite3.connect(tmp_path / "c.sqlite") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_wraps_any_backend_by_name_and_model(tmp_path):
    fake = FakeLLM(outputs=["one", "two"])
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        backend = CachedBackend(fake, cache)
        assert backend.complete(MESSAGES).text == "one"
        assert backend.complete(MESSAGES).text == "one"
    assert len(fake.calls) == 1


def test_key_is_canonical():
    identity = {"backend": "b", "model": "m", "params": {}}
    key = cache_key(identity, MESSAGES, {"max_tokens": 5, "temperature": 0})
    assert key == cache_key(dict(reversed(identity.items())), MESSAGES, {"temperature": 0, "max_tokens": 5})
    assert key != cache_key(identity, MESSAGES, {"max_tokens": 6, "temperature": 0})


def test_the_key_holds_the_endpoint_without_credentials():
    def key(url):
        config = BackendConfig(name="llamacpp", base_url=url, model="default")
        return cache_key(config.identity(), MESSAGES, {})

    assert key("http://10.0.0.1:1/v1") != key("http://10.0.0.2:2/v1")  # two servers both serving "default"
    # credentials and key-like query params do not make another endpoint, nor reach the key's payload
    assert key("http://10.0.0.1:1/v1") == key("http://user:sk-SECRET@10.0.0.1:1/v1/?api_key=sk-SECRET")
    assert key("http://10.0.0.1:1/v1?api-version=1") != key("http://10.0.0.1:1/v1?api-version=2")
    identity = BackendConfig(name="b", base_url="https://u:sk-SECRET@Api.Example.com/v1?key=sk-SECRET&x=1",
                             model="m").identity()
    assert identity["endpoint"] == "https://api.example.com/v1?x=1"


def test_same_model_name_on_two_servers_never_shares_and_no_credential_reaches_the_file(tmp_path):
    secret = "sk-url-SECRET-987"
    path = tmp_path / "c.sqlite"
    # two servers serving different things (seeds) under one model name: a server lyra-lab started is known
    # by what it serves (lyra_lab._served), so two started alike would be one model, as a restart is
    with SimulatedServer(seed=1) as one, SimulatedServer(seed=2) as two, ResponseCache(path) as cache:
        url_one = one.base_url.replace("http://", f"http://alice:{secret}@")
        a = CachedBackend(_backend(one, base_url=url_one, model="default"), cache)
        b = CachedBackend(_backend(two, model="default"), cache)
        a.complete(MESSAGES)
        assert not b.complete(MESSAGES).cached  # the other server is asked, not answered for
        assert (one.request_count, two.request_count, len(cache)) == (1, 1, 2)
        assert a.complete(MESSAGES).cached and b.complete(MESSAGES).cached
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert secret.encode() not in stored and b"alice" not in stored


def test_make_backend_cache_option(sim, tmp_path):
    backend = make_backend({"preset": "simulated", "base_url": sim.base_url,
                            "cache": str(tmp_path / "r.sqlite")})
    assert isinstance(backend, CachedBackend)
    backend.complete(MESSAGES)
    assert backend.complete(MESSAGES).cached and sim.request_count == 1
    backend.cache.close()


def test_write_through_an_answer_is_committed_before_the_caller_gets_it(sim, tmp_path):
    """What a kill -9 can lose is only an answer still in flight: one returned is already on disk.

    A second connection (as a resumed process would open) sees the answer the moment ``complete``
    returns, before the caller has done anything with it.
    """
    path = tmp_path / "c.sqlite"
    found = []
    with ResponseCache(path) as cache:
        backend = CachedBackend(_backend(sim), cache)
        for i in range(2):
            messages = [{"role": "user", "content": f"Question {i}: Dana repaints the fence every May."}]
            answer = backend.complete(messages)
            with ResponseCache(path) as other:
                hit = other.get(cache_key(backend.capabilities.identity, messages, {}))
            found.append(hit is not None and hit.text == answer.text and not answer.cached)
    assert found == [True, True] and sim.request_count == 2
