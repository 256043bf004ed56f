"""The ``local`` preset starts its llama.cpp server on the first call the response cache does not answer.

Its identity (what keys the response cache) is the GGUF's content, the alias the server gives the
model and the preset's settings: all known from the file, so building the backend and answering from
the cache start nothing. ``FakeLocalServer`` stands in for the llama.cpp server (a ``SimulatedServer``
under the GGUF's alias); ``ensure_local_server``, the one place the preset starts a server, counts.
"""

from __future__ import annotations

import pickle

import pytest

from lyra_lab.backends import CachedBackend, ResponseCache, SimulatedServer, make_backend, token_counter
from lyra_lab.backends import _local_server
from lyra_lab.backends._gguf_identity import gguf_sha256

MESSAGES = [{"role": "user", "content": "Dana repaints the fence every May. The paint is always green."}]


class FakeLocalServer:
    """A stand-in for a started ``LocalServer``: a simulated server answering under the GGUF's alias."""

    def __init__(self, server: SimulatedServer, alias: str):
        self.base_url, self.model, self._server = server.base_url, alias, server

    def running(self) -> bool:
        return True

    def token_counter(self):
        return token_counter(self.model)


@pytest.fixture
def gguf(tmp_path):
    path = tmp_path / "models" / "tiny-model.gguf"
    path.parent.mkdir()
    path.write_bytes(b"GGUF" + b"weights of a tiny model")
    return path


@pytest.fixture
def starts(monkeypatch, gguf):
    """The servers the preset started (model paths), on a simulated server standing in for llama.cpp."""
    started: list[object] = []
    with SimulatedServer() as server:
        def ensure(model_path=None, **options):
            started.append(model_path)
            return FakeLocalServer(server, gguf.stem)

        monkeypatch.setattr(_local_server, "ensure_local_server", ensure)
        yield started, server


def test_building_the_local_preset_starts_no_server_and_knows_its_identity(gguf, starts):
    started, _ = starts
    backend = make_backend({"preset": "local", "model_path": str(gguf)})
    identity = backend.capabilities.identity
    assert started == []
    # the identity the started backend has always had (caches made before keep their answers)
    assert identity == {"backend": "local", "endpoint": "local-gguf", "model": "tiny-model",
                        "params": {"temperature": 0, "repeat_penalty": 1.3}, "model_sha256": gguf_sha256(gguf)}
    assert backend.capabilities.description["started"] is False
    assert backend.model == "tiny-model"
    again = pickle.loads(pickle.dumps(backend))  # to a worker process: still not started, the same identity
    assert again.capabilities.identity == identity and started == []


def test_a_cached_answer_starts_no_server_and_a_miss_starts_it_once(gguf, starts, tmp_path):
    started, server = starts
    spec = {"preset": "local", "model_path": str(gguf)}
    with ResponseCache(tmp_path / "responses.sqlite") as cache:
        first = CachedBackend(make_backend(spec), cache).complete(MESSAGES, max_tokens=8)
        assert not first.cached and started == [str(gguf)] and server.request_count == 1
        assert first.model == "tiny-model"
        # a rescore: a new backend on the same cache, every answer held
        rescored = make_backend(spec)
        hit = CachedBackend(rescored, cache).complete(MESSAGES, max_tokens=8)
        assert hit.cached and hit.text == first.text
        assert started == [str(gguf)] and server.request_count == 1  # nothing started, nothing sent
        assert rescored.capabilities.description["started"] is False
        # the first question the cache does not hold starts the server, once, and is answered
        other = [{"role": "user", "content": "Where does Dana live?"}]
        miss = CachedBackend(rescored, cache).complete(other, max_tokens=8)
        assert not miss.cached and miss.text and server.request_count == 2
        assert CachedBackend(rescored, cache).complete(other + [{"role": "user", "content": "And?"}]).text
        assert started == [str(gguf), str(gguf)] and server.request_count == 3
        assert rescored.config.base_url == server.base_url
        assert rescored.capabilities.description["started"] is True
        assert rescored.capabilities.identity == make_backend(spec).capabilities.identity

