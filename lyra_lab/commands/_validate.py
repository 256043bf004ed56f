"""Check an experiment before its run folder exists: corpus and probes files, extras, backends, embedders.

Building a backend may start the local model server, so backends are checked
as configs: the local preset's keys, field values and model_path
(a GGUF file) without starting anything; other presets are built (no network
call is made, but a missing API-key variable fails here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lyra_lab.commands._checks import input_file

if TYPE_CHECKING:
    from lyra_lab.backends import BackendSpec
    from lyra_lab.experiments import ExperimentSpec


def check_experiment(spec: ExperimentSpec) -> None:
    """Raise a one-line error for anything of ``spec`` that would fail once the run had started."""
    input_file(spec.corpus.path, "corpus file")
    if spec.corpus.probes is not None:
        input_file(spec.corpus.probes, "probes file")
    from lyra_lab.backends import check_backend_spec
    from lyra_lab.experiments.cells import check_capabilities

    check_capabilities(spec)
    # every backend's spec; that it is installed only where a cell calls it (an LLM-free grid's default
    # `local` needs no llama.cpp)
    calls = spec.qa.enabled or any(p.calls_backend for p in spec.pipelines) \
        or any(s.system.needs().backend for s in spec.systems)
    called = [*(spec.backends if calls else ()), spec.qa.backend, *(j.backend for j in spec.qa.judges)]
    installed = {_key(b) for b in called if b}
    for backend in dict.fromkeys(_key(b) for b in [*spec.backends, *called] if b):
        check_backend_spec(_value(backend), installed=backend in installed)
    for embedder in spec.embedders:
        if embedder not in (None, "none"):
            from lyra_lab.backends import make_embedder

            make_embedder(embedder)


def _key(spec: BackendSpec) -> str:
    import json

    return spec if isinstance(spec, str) else json.dumps(spec, sort_keys=True, default=str)


def _value(key: str) -> BackendSpec:
    import json

    return json.loads(key) if isinstance(key, str) and key.startswith("{") else key
