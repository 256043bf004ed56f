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
    caplog.set_level(logging.DEBUG, logger="lyra_lab.backends")  # even if a command (bench) quietened it
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
    (records / "backend.json").write_text(json.dumps(dict(backend.capabilities.description), default=str))
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


# --- an experiment with a secret in every place a user could put one ----------------------------

PLANTED = {"env": "sk-env-SECRET-1111", "url": "url-SECRET-2222", "header": "hdr-SECRET-3333"}


def _forms(secret: str) -> list[bytes]:
    """The secret as bytes, and as base64 / URL-encoding / Basic-auth would carry it."""
    import base64
    from urllib.parse import quote

    raw = secret.encode()
    forms = [raw, quote(secret, safe="").encode(), base64.b64encode(raw).rstrip(b"=")]
    for user in ("lyra:", ""):  # a Basic auth header is base64("user:password")
        forms.append(base64.b64encode(f"{user}{secret}".encode()).rstrip(b"="))
    return forms


def _leaks(folder: Path) -> dict[str, list[str]]:
    """{file (relative): [which planted secrets it holds in any form]} over every file under ``folder``."""
    found: dict[str, list[str]] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            hits = [name for name, secret in PLANTED.items() if any(f in data for f in _forms(secret))]
            if hits:
                found[str(path.relative_to(folder))] = hits
    return found


@pytest.fixture(scope="module")
def secret_run(tmp_path_factory):
    """A small experiment on the simulated server with every secret planted; returns its run folder."""
    import os

    from lyra_lab.synthetic import generate_synthetic
    from lyra_lab.reports import write_report
    from lyra_lab.experiments import ExperimentSpec, run_experiment

    tmp = tmp_path_factory.mktemp("secret-run")
    corpus = generate_synthetic(0, conversations=1, months=1, sessions=4, single_facts=2, updated_facts=1,
                                temporal=1, multi_hop=1, abstention=1).save(tmp / "corpus.jsonl")
    old = os.environ.get("LYRA_TEST_API_KEY")
    os.environ["LYRA_TEST_API_KEY"] = PLANTED["env"]
    try:
        with SimulatedServer(latency_s=0.0) as server:
            # user:password in the URL: httpx turns it into a Basic auth header (which the server ignores)
            url = server.base_url.replace("http://", f"http://lyra:{PLANTED['url']}@")
            header = PLANTED["header"]
            headers = f'{{ extra_headers = {{ X-Api-Key = "{header}" }} }}'
            backend = (f'{{ preset = "simulated", base_url = "{url}", api_key_env = "LYRA_TEST_API_KEY", '
                       f'retry_base_s = 0.01, params = {headers} }}')
            toml = f"""
                name = "secrets"
                [corpus]
                path = "{corpus}"
                [grid]
                chunkers = [{{ name = "turn_window", max_turns = 4 }}]
                summarizers = [{{ name = "single_pass", max_tokens = 16 }}]
                recallers = ["bm25"]
                [run]
                backends = [{backend}]
                embedders = ["hashing"]
                ks = [1, 3]
                cache = "run"
                [qa]
                enabled = true
                max_probes = 2
                """
            path = tmp / "secrets.toml"
            path.write_text("\n".join(line.strip() for line in toml.splitlines()), encoding="utf-8")
            run = tmp / "run"
            server.enqueue("503", "429")  # retries, which the run log records
            df = run_experiment(ExperimentSpec.from_toml(path), run)
            chats = server.chat_log()
        write_report(run)
    finally:
        if old is None:
            os.environ.pop("LYRA_TEST_API_KEY", None)
        else:
            os.environ["LYRA_TEST_API_KEY"] = old
    assert not df.attrs["failed_cells"] and len(chats) > 0 and all(r.has_auth for r in chats)
    from lyra_lab.runs import read_log

    assert [e["status"] for e in read_log(run / "log.jsonl") if e["event"] == "retry"] == [503, 429]
    return run


def test_no_planted_secret_reaches_the_caches_rows_env_results_or_report(secret_run):
    leaks = _leaks(secret_run)
    assert (secret_run / "cache" / "responses.sqlite").exists() and (secret_run / "report").is_dir()
    assert {f: s for f, s in leaks.items() if f not in ("spec.json", "log.jsonl")} == {}


def test_no_planted_secret_reaches_spec_json_or_the_run_log(secret_run):
    assert _leaks(secret_run) == {}


def test_the_env_var_secret_never_leaks_anywhere(secret_run):
    # the key itself only ever travels by the variable's name
    assert all("env" not in names for names in _leaks(secret_run).values())


def test_redact_masks_what_a_backend_spec_can_hold():
    from lyra_lab.backends._backend_config import redact

    spec = {"preset": "openai/gpt-4o-mini", "api_key_env": "OPENAI_API_KEY", "api_key": "sk-x",
            "base_url": "https://u:pw@h.example/v1?api_key=sk-y&api-version=2",
            "params": {"temperature": 0, "max_tokens": 5, "extra_headers": {"Authorization": "Bearer sk-z"}},
            "backends": ["local", {"base_url": "http://u:pw@10.0.0.1/v1"}]}
    out = redact(spec)
    assert out == {"preset": "openai/gpt-4o-mini", "api_key_env": "OPENAI_API_KEY", "api_key": "***",
                   "base_url": "https://h.example/v1?api-version=2",
                   "params": {"temperature": 0, "max_tokens": 5, "extra_headers": {"Authorization": "***"}},
                   "backends": ["local", {"base_url": "http://10.0.0.1/v1"}]}
    config = BackendConfig(name="x", base_url="http://u:pw@10.0.0.1/v1", model="m",
                           params={"extra_headers": {"X-Api-Key": "sk-h"}})
    assert "sk-h" not in json.dumps(config.describe()) + json.dumps(config.identity())
    assert "pw" not in json.dumps(config.describe()) + json.dumps(config.identity())
