"""An API key is used on the wire and nowhere else: not in logs, caches, records or errors."""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

import pytest

from lyra_lab import ConfigError
from lyra_lab.backends import BackendConfig, BackendError, SimulatedServer, make_backend

SECRET = "sk-test-SECRET-123"
MESSAGES = [{"role": "user", "content": "Eve keeps bees. The hives are on the roof."}]


def _all_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


def test_the_key_reaches_the_server_and_no_file_or_log(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("LYRA_TEST_KEY", SECRET)
    caplog.set_level(logging.DEBUG)  # every logger, the openai and HTTP clients' included
    with SimulatedServer(api_key=SECRET, retry_after_s=0.01) as server:
        spec = {"preset": "simulated", "base_url": server.base_url, "api_key_env": "LYRA_TEST_KEY",
                "retry_base_s": 0.01, "max_attempts": 2, "cache": str(tmp_path / "responses.sqlite")}
        backend = make_backend(spec)
        server.enqueue("503", "ok")
        completions = [backend.complete(MESSAGES), backend.complete(MESSAGES)]  # a retry, then a cache hit
        server.enqueue("529", "529")
        with pytest.raises(BackendError) as info:
            backend.complete([{"role": "user", "content": "Other question."}])
        log = server.chat_log()
        backend.cache.close()
    # the key was really used: the server checks it and would have answered 401
    assert [r.status for r in log] == [503, 200, 529, 529] and all(r.has_auth for r in log)
    assert completions[1].cached

    records = tmp_path / "run"
    records.mkdir()
    (records / "completions.jsonl").write_text(
        "\n".join(json.dumps(dataclasses.asdict(c), default=str) for c in completions))
    (records / "backend.json").write_text(json.dumps(backend.describe(), default=str))
    (records / "error.txt").write_text(f"{info.value}\n{info.value!r}\n{backend!r}")

    assert SECRET.encode() not in _all_bytes(tmp_path)  # records and the SQLite cache (with its WAL)
    assert any(r.name.startswith("openai") for r in caplog.records), "debug logs of the client were captured"
    assert any(r.name == "lyra_lab.backends" for r in caplog.records), "the retry was logged"
    assert SECRET not in caplog.text
    assert SECRET not in "".join(str(r.__dict__) for r in caplog.records)


def test_a_key_echoed_by_the_provider_is_masked_in_the_error(monkeypatch):
    monkeypatch.setenv("LYRA_TEST_KEY", SECRET)
    with SimulatedServer(api_key="sk-the-right-one") as server:  # answers 401 repeating the key it got
        backend = make_backend({"preset": "simulated", "base_url": server.base_url,
                                "api_key_env": "LYRA_TEST_KEY"})
        with pytest.raises(BackendError) as info:
            backend.complete(MESSAGES)
    assert info.value.status == 401 and info.value.attempts == 1
    assert "Incorrect API key provided: ***" in str(info.value)
    assert SECRET not in str(info.value) and SECRET not in info.value.provider_message


def test_a_missing_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        make_backend("openai/gpt-4o-mini")


def test_a_key_pasted_as_the_variable_name_is_refused_without_echoing_it():
    with pytest.raises(ConfigError) as info:
        BackendConfig(name="x", base_url="https://api.example.com/v1", model="m", api_key_env=SECRET)
    assert SECRET not in str(info.value)
    assert "NAME of an environment variable" in str(info.value)


def test_describe_and_repr_hold_the_variable_name_only(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    backend = make_backend("openai/gpt-4o-mini")
    described = json.dumps(backend.describe())
    assert SECRET not in described and SECRET not in repr(backend) and SECRET not in repr(backend.config)
    assert backend.describe()["api_key_env"] == "OPENAI_API_KEY"


def test_a_pickled_backend_carries_no_key(monkeypatch):
    import pickle

    monkeypatch.setenv("LYRA_TEST_KEY", SECRET)
    backend = make_backend({"name": "x", "base_url": "http://127.0.0.1:9/v1", "model": "m",
                            "api_key_env": "LYRA_TEST_KEY"})
    data = pickle.dumps(backend)
    assert SECRET.encode() not in data
    assert pickle.loads(data).config == backend.config  # rebuilt, reading the key from the environment
    monkeypatch.delenv("LYRA_TEST_KEY")
    with pytest.raises(ConfigError, match="LYRA_TEST_KEY"):
        pickle.loads(data)
