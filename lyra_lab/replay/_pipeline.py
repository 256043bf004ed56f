"""A memory pipeline: how turns become memory (chunker, summarizer, rollup, trigger, budgets).

Recallers are not part of it: the memory a pipeline builds does not depend on
how it is later searched, so one replay serves every recaller of a grid
(2 chunkers × 2 summarizers × 3 recallers cost 4 replays, not 12).

>>> from lyra_lab.replay import Pipeline, Registries
>>> regs = Registries.default()
>>> p = Pipeline.from_dict({"chunker": {"name": "turn_window", "max_turns": 4}}, regs)
>>> p.kind_names()["summarizer"]
'none'
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from lyra_lab._params import strategy_name
from lyra_lab._records import Schema, fields_of
from lyra_lab._registry import ConfigError, Registry
from lyra_lab.replay._triggers import TRIGGERS, SessionEnd, Trigger

if TYPE_CHECKING:
    from lyra_lab.chunking import Chunker
    from lyra_lab.recall import Recaller
    from lyra_lab.rollup import Rollup
    from lyra_lab.summarize import Summarizer

PIPELINE = Schema("pipeline", 1, legacy=1)  # a pipeline's record: to_record(); spec.json lists the bare to_dict()s
PIPELINE_KEYS = ("chunker", "summarizer", "rollup", "trigger", "budget", "context_budget", "keep_raw", "tokenizer")
NONE_NAMES = (None, "none", "")


@dataclass(frozen=True)
class Registries:
    """The strategy registries a pipeline and an experiment are built from.

    Passed around explicitly so tests can use their own stand-ins instead of
    patching globals.
    """

    chunkers: Registry[Chunker]
    summarizers: Registry[Summarizer]
    rollups: Registry[Rollup]
    recallers: Registry[Recaller]
    triggers: Registry[Trigger] = field(default=TRIGGERS)

    @classmethod
    def default(cls) -> "Registries":
        """The registries of lyra-lab's own strategies (imported here, on first use)."""
        from lyra_lab.chunking import CHUNKERS
        from lyra_lab.recall import RECALLERS
        from lyra_lab.rollup import ROLLUPS
        from lyra_lab.summarize import SUMMARIZERS

        return cls(CHUNKERS, SUMMARIZERS, ROLLUPS, RECALLERS, TRIGGERS)


@dataclass(frozen=True)
class Pipeline:
    """The memory-building half of an experiment cell.

    Attributes:
        chunker: splits the pending turns at each trigger.
        summarizer: turns those chunks into one ``summary`` entry; None puts the
            chunks themselves into memory (kind ``chunk``).
        rollup: compacts the conversation's memory under ``budget`` after each
            trigger; None lets memory grow.
        trigger: when pending turns are chunked and summarized.
        budget: the memory budget in tokens the rollup compacts to.
        context_budget: tokens of the context block rendered from recall hits.
        keep_raw: raw turns enter memory as they arrive; when False, the turns a
            summary (or chunk) covers are removed once it is written, so memory
            holds the summary instead of the transcript.  Default True: recall
            can still find the exact turn, and the summary adds a coarse view.
            (Without a summarizer and with keep_raw, memory holds each turn
            both raw and inside its chunk: two granularities to recall from;
            a chunk of exactly one turn would be the raw turn again, so it is
            not written and each turn is in memory once.)
            A rollup may still fold or drop raw turns later, whatever keep_raw.
        tokenizer: the encoding or model name budgets are counted in.
    """

    chunker: Chunker
    summarizer: Summarizer | None = None
    rollup: Rollup | None = None
    trigger: Trigger = SessionEnd()
    budget: int = 2000
    context_budget: int = 1000
    keep_raw: bool = True
    tokenizer: str = "o200k_base"

    def __post_init__(self) -> None:
        if self.chunker is None:
            raise ValueError("a pipeline needs a chunker")
        for name in ("budget", "context_budget"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer (tokens), got {value!r}")
        if not isinstance(self.keep_raw, bool):
            raise ValueError(f"keep_raw must be true or false, got {self.keep_raw!r}")

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any], registries: Registries | None = None) -> "Pipeline":
        """Build from ``{"chunker": {...}, "summarizer": {...} | "none", "rollup": ..., ...}`` (or its record)."""
        regs = registries or Registries.default()
        spec = PIPELINE.unwrap(spec, "pipeline")
        unknown = sorted(set(spec) - set(PIPELINE_KEYS))
        if unknown:
            raise ConfigError(f"pipeline: unknown key {unknown[0]!r}; allowed: {', '.join(PIPELINE_KEYS)}")
        if spec.get("chunker") in NONE_NAMES:
            raise ConfigError("pipeline: 'chunker' is required")
        built: dict[str, Any] = {"chunker": regs.chunkers.build(spec["chunker"])}
        for kind, registry in (("summarizer", regs.summarizers), ("rollup", regs.rollups)):
            value = spec.get(kind)
            built[kind] = None if value is None or _is_none(value) else registry.build(value)
        if "trigger" in spec:
            built["trigger"] = regs.triggers.build(spec["trigger"])
        for key in ("budget", "context_budget", "keep_raw", "tokenizer"):
            if key in spec:
                built[key] = spec[key]
        try:
            return cls(**built)
        except ValueError as exc:
            raise ConfigError(f"pipeline: {exc}") from exc

    @property
    def calls_backend(self) -> bool:
        """It makes LLM calls: a summarizer or a rollup (chunkers and recallers take no backend)."""
        return self.summarizer is not None or self.rollup is not None

    def kind_names(self) -> dict[str, str]:
        """Registered names of the strategies, ``"none"`` where absent."""
        return {kind: _name(getattr(self, kind)) for kind in ("chunker", "summarizer", "rollup", "trigger")}

    def to_dict(self) -> dict[str, Any]:
        """The resolved spec: every strategy with all of its parameters (defaults included)."""
        out: dict[str, Any] = {}
        for kind in ("chunker", "summarizer", "rollup", "trigger"):
            value = getattr(self, kind)
            out[kind] = "none" if value is None else strategy_spec(value)
        out.update(budget=self.budget, context_budget=self.context_budget, keep_raw=self.keep_raw,
                   tokenizer=self.tokenizer)
        return out

    def to_record(self) -> dict[str, Any]:
        """``to_dict()`` behind the ``pipeline/1`` envelope; ``from_dict`` reads it back."""
        return PIPELINE.wrap(self.to_dict())

    def params(self) -> dict[str, Any]:
        """Flat ``<kind>.<param>`` columns for tidy result rows."""
        flat: dict[str, Any] = {}
        for kind in ("chunker", "summarizer", "rollup", "trigger"):
            value = getattr(self, kind)
            if value is not None:
                flat.update(flatten_params(kind, value))
        flat.update({"pipeline.budget": self.budget, "pipeline.context_budget": self.context_budget,
                     "pipeline.keep_raw": self.keep_raw})
        return flat


def _is_none(value: object) -> bool:
    if isinstance(value, Mapping):
        return value.get("name") in NONE_NAMES
    return value in NONE_NAMES


def _name(strategy: object) -> str:
    if strategy is None:
        return "none"
    return strategy_name(strategy)


def strategy_spec(strategy: object) -> dict[str, Any]:
    """``{"name": ..., **params}`` of a strategy, with JSON-friendly values (the records convention)."""
    return {"name": _name(strategy), **(fields_of(strategy) if dataclasses.is_dataclass(strategy) else {})}


def flatten_params(kind: str, strategy: object) -> dict[str, Any]:
    """``{"<kind>.<param>": value}`` for every scalar-ish parameter of a strategy."""
    spec = strategy_spec(strategy)
    spec.pop("name")
    flat = {}
    for key, value in spec.items():
        if isinstance(value, dict):
            # Nested parameters (a prompt set) are long: rows carry a short fingerprint, spec.json the text.
            text = json.dumps(value, sort_keys=True, default=str)
            value = "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
        elif isinstance(value, list):
            value = json.dumps(value, default=str)
        flat[f"{kind}.{key}"] = value
    return flat

