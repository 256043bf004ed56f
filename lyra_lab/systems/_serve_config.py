"""What ``lyra-lab serve-memory`` serves: a small TOML file naming a pipeline (or any system).

::

    backend = "local"        # the LLM of summaries and rollups (built only if the pipeline has them)
    embedder = "e5"          # built only if the recaller needs one
    recaller = "hybrid"      # a name or a table
    [pipeline]               # as in an experiment's pipeline: chunker, summarizer, rollup, trigger, budgets
    chunker = {name = "turn_window", max_turns = 4}
    summarizer = "single_pass"

Instead of ``[pipeline]``/``recaller``, a ``[system]`` table serves any registered
system (``{name = "mem0", infer = false}``).  A ``.json`` file with the same keys
is read as JSON (what the ``served`` system writes for the process it starts).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from lyra_lab._registry import ConfigError
from lyra_lab.backends import (DEFAULT_EMBEDDER, Backend, BackendSpec, Embedder, EmbedderSpec, make_backend,
                               make_embedder)
from lyra_lab.systems import _pipeline  # noqa: F401 - registers the "pipeline" system built here by name
from lyra_lab.systems._types import SYSTEMS, MemorySystem

KEYS = ("backend", "embedder", "recaller", "pipeline", "system", "conversation_id")


@dataclass(frozen=True)
class ServeConfig:
    """A system to serve and the specs of the backend and embedder it may need.

    Attributes:
        system: the memory system served.
        backend: the backend's preset name or table (built only if the system needs one).
        embedder: the embedder's name or table (built only if the system needs one).
        conversation_id: the conversation of a served MCP memory (one per process).
    """

    system: MemorySystem
    backend: BackendSpec | Backend = "local"
    embedder: EmbedderSpec | Embedder = DEFAULT_EMBEDDER
    conversation_id: str = "default"

    def resources(self) -> tuple[Backend | None, Embedder | None]:
        """The backend and embedder the system needs, built now (None for what it does not need)."""
        needs = self.system.needs()
        return (make_backend(self.backend) if needs.backend else None,
                make_embedder(self.embedder) if needs.embedder else None)


def serve_config(data: Mapping[str, object], where: str = "serve config") -> ServeConfig:
    """A ``ServeConfig`` from a parsed TOML table; one ``ConfigError`` line naming ``where`` when it is bad."""
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(KEYS)}")
    try:
        if "system" in data:
            if "pipeline" in data or "recaller" in data:
                raise ConfigError("give [system] or [pipeline]/recaller, not both")
            system: MemorySystem = SYSTEMS.build(_spec(data, "system", ""))
        else:
            # the pipeline system from its table, as a [system] table would give it (its defaults where absent)
            system = SYSTEMS.build({"name": "pipeline", **{key: data[key] for key in ("pipeline", "recaller")
                                                             if key in data}})
        backend, embedder = _spec(data, "backend", "local"), _spec(data, "embedder", DEFAULT_EMBEDDER)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    conversation_id = data.get("conversation_id", "default")
    if not isinstance(conversation_id, str) or not conversation_id:
        raise ConfigError(f"{where}: conversation_id must be a non-empty string, got {conversation_id!r}")
    return ServeConfig(system, backend, embedder, conversation_id)


def _spec(data: Mapping[str, object], key: str, default: str) -> str | Mapping[str, object]:
    """The spec of the system, backend or embedder: a name or a table."""
    value = data.get(key, default)
    if not isinstance(value, (str, Mapping)):
        raise ConfigError(f"{key} must be a name or a table, got {type(value).__name__}")
    return value


def read_toml(path: str | Path) -> dict[str, object]:
    """A TOML file's table (a ``.json`` file's object); one ``ConfigError`` line naming the file when it is not."""
    if Path(path).suffix == ".json":
        import json

        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ConfigError(f"{path}: not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a JSON object, got {type(data).__name__}")
        return data
    with Path(path).open("rb") as f:
        try:
            return tomllib.load(f)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not TOML: {exc}") from None


def load_serve_config(path: str | Path) -> ServeConfig:
    """Read a serve-memory TOML file."""
    return serve_config(read_toml(path), str(path))
