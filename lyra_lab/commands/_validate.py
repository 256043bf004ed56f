"""Check an experiment before its run folder exists: corpus and probes files, backends, embedders.

Building a backend may start the local model server, so backends are checked
as configs: the local preset's keys, field values and model_path
(a GGUF file) without starting anything; other presets are built (no network
call is made, but a missing API-key variable fails here).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from lyra_lab._registry import ConfigError
from lyra_lab.commands._checks import input_file


def check_experiment(spec: Any) -> None:
    """Raise a one-line error for anything of ``spec`` that would fail once the run had started."""
    input_file(spec.corpus.path, "corpus file")
    if spec.corpus.probes is not None:
        input_file(spec.corpus.probes, "probes file")
    for backend in dict.fromkeys(_key(b) for b in [*spec.backends, spec.qa.backend, spec.judge.backend] if b):
        check_backend(_value(backend))
    for embedder in spec.embedders:
        if embedder not in (None, "none"):
            from lyra_lab.backends import make_embedder

            make_embedder(embedder)


def check_backend(spec: Any) -> None:
    """Fail like ``make_backend(spec)`` would, without starting the local model server."""
    from lyra_lab.backends import BackendConfig, make_backend

    if spec == "fake":  # the runner's own offline fake
        return
    config = {"preset": spec} if isinstance(spec, str) else spec
    if not isinstance(config, dict):
        raise ConfigError(f"backend spec must be a preset name or a table, got {type(spec).__name__}")
    config = {k: v for k, v in config.items() if k != "cache"}  # a cache file is made at run time
    preset = str(config.get("preset", ""))
    if preset.partition("/")[0] != "local":
        make_backend(config)
        return
    fields = {f.name for f in dataclasses.fields(BackendConfig)}
    overrides = {k: v for k, v in config.items() if k != "preset"}
    allowed = fields | {"model_path"}
    unknown = sorted(set(overrides) - allowed)
    if unknown:
        raise ConfigError(f"backend preset {preset!r}: unknown key {unknown[0]!r}; "
                          f"allowed: preset, cache, {', '.join(sorted(allowed))}")
    model_path = overrides.pop("model_path", None)
    if model_path is not None:
        from lyra_lab.backends import check_gguf

        check_gguf(model_path)
    base = {"name": "local", "base_url": "http://127.0.0.1:1/v1", "model": "local"}
    BackendConfig.from_dict({**base, **overrides})


def _key(spec: Any) -> Any:
    import json

    return spec if isinstance(spec, str) else json.dumps(spec, sort_keys=True, default=str)


def _value(key: Any) -> Any:
    import json

    return json.loads(key) if isinstance(key, str) and key.startswith("{") else key
