"""One of lyra-lab's own pipelines as a memory system: a ``replay.PipelineMemory`` plus a recaller.

This is what ``lyra-lab serve-memory`` serves over MCP and HTTP, and the
in-process reference those round trips are tested against.  Its parameters are
the pipeline and the recaller as plain specs (kept as canonical JSON text, so the
system stays a hashable frozen dataclass); they are built with lyra-lab's own
registries.

>>> system = PipelineSystem(pipeline={"chunker": {"name": "turn_window", "max_turns": 2}}, recaller="bm25")
>>> system.label(), system.build()[1]
('pipeline:turn_window+bm25', Bm25(stemmer='none', tokens='words2'))
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from dataclasses import Field
from typing import Any, ClassVar, Mapping, Protocol, Sequence, runtime_checkable

from lyra_lab._registry import ConfigError, Registry
from lyra_lab._params import param
from lyra_lab.backends import Backend, Embedder, FakeLLM
from lyra_lab.corpus import Turn
from lyra_lab.memory import MemoryEntry
from lyra_lab.recall import BaseRecaller, Recaller
from lyra_lab.replay import LiveSetup, Pipeline, PipelineMemory, Registries, strategy_spec
from lyra_lab.systems._base import BaseSession, BaseSystem
from lyra_lab.systems._types import SYSTEMS, Declared, IngestReport, Needs, SystemHit

DEFAULT_PIPELINE = {"chunker": {"name": "turn_window"}, "summarizer": "none"}


@runtime_checkable
class PipelineRecaller(Recaller, Protocol):
    """A recaller strategy (a dataclass) that says whether it embeds (as ``recall.BaseRecaller`` does)."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    def needs_embedder(self) -> bool:
        """Whether its recall needs the cell's embedder."""
        ...



def pipeline_json(value: object) -> str:
    """A pipeline spec (dict, JSON text or ``Pipeline``) as canonical JSON of its resolved spec."""
    pipeline = value if isinstance(value, Pipeline) else Pipeline.from_dict(_mapping(value, "pipeline"))
    return json.dumps(pipeline.to_dict(), sort_keys=True)


def recaller_json(value: object) -> str:
    """A recaller spec (a name, dict, JSON text or recaller) as canonical JSON of its resolved spec."""
    if isinstance(value, str) and not value.lstrip().startswith("{"):
        value = {"name": value}
    spec = value if isinstance(value, Recaller) else _mapping(value, "recaller")
    recaller = Registries.default().recallers.build(spec)
    if isinstance(recaller, BaseRecaller) and recaller.needs_evidence():
        raise ConfigError(f"recaller {type(recaller).__name__} needs each probe's gold evidence, which a memory "
                          "system is never told: list it among a grid's recallers instead")
    return json.dumps(strategy_spec(recaller), sort_keys=True)


def pipeline_param(doc: str) -> str:
    """The ``pipeline`` parameter of a system that runs one of lyra-lab's pipelines (canonical JSON text)."""
    return param(json.dumps(DEFAULT_PIPELINE), convert=pipeline_json,
                 allowed="a pipeline table (chunker, summarizer, rollup, trigger, budgets)",
                 check=lambda text: bool(json.loads(text)), doc=doc)


def recaller_param(doc: str) -> str:
    """The ``recaller`` parameter of a system that runs one of lyra-lab's pipelines (canonical JSON text)."""
    return param("bm25", convert=recaller_json, allowed="a recaller name or table",
                 check=lambda text: bool(json.loads(text)), doc=doc)


def _mapping(value: object, what: str) -> Mapping[str, object]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ConfigError(f"system 'pipeline': {what} is not JSON: {exc}") from None
    if not isinstance(value, Mapping):
        raise ConfigError(f"system 'pipeline': {what} must be a table, got {type(value).__name__}")
    return value


@SYSTEMS.register("pipeline")
@dataclass(frozen=True)
class PipelineSystem(BaseSystem):
    """A lyra-lab pipeline (chunker, summarizer, rollup, trigger) and a recaller, built live."""

    pipeline: str = pipeline_param("the memory pipeline, as in an experiment file's pipeline tables.")
    recaller: str = recaller_param("how a query is answered.")

    def build(self, registries: Registries | None = None) -> tuple[Pipeline, PipelineRecaller]:
        """The ``Pipeline`` and the recaller these specs name.

        Raises:
            ConfigError: the recaller does not say whether it embeds (``PipelineRecaller``).
        """
        regs = registries or Registries.default()
        recaller = regs.recallers.build(json.loads(self.recaller))
        if not isinstance(recaller, PipelineRecaller):
            raise ConfigError(f"system 'pipeline': recaller {type(recaller).__name__} has no needs_embedder() "
                              "(a recall.BaseRecaller has)")
        return Pipeline.from_dict(json.loads(self.pipeline), regs), recaller

    def label(self) -> str:
        """``pipeline:<chunker>[+summarizer][+rollup]+<recaller>`` (``pipeline:turn_window+bm25``)."""
        pipeline, recaller = self.build()
        names = pipeline.kind_names()
        parts = [names["chunker"]] + [names[k] for k in ("summarizer", "rollup") if names[k] != "none"]
        return f"pipeline:{'+'.join(parts)}+{Registry.spec(recaller)['name']}"

    def needs(self) -> Needs:
        """A backend when the pipeline summarizes or rolls up; an embedder when the recaller embeds."""
        pipeline, recaller = self.build()
        return Needs(backend=pipeline.summarizer is not None or pipeline.rollup is not None,
                     embedder=recaller.needs_embedder())

    def declare(self) -> Declared:
        """It runs in lyra-lab's process: the plan's dry run runs it as it is, against stand-in models."""
        return Declared(in_process=True)

    def open(self, conversation_id: str, backend: Backend | None, embedder: Embedder | None) -> "PipelineSession":
        pipeline, recaller = self.build()
        setup = LiveSetup(backend or FakeLLM(), recaller=recaller, embedder=embedder)
        return PipelineSession(self.label(), PipelineMemory(conversation_id, pipeline, setup))


class PipelineSession(BaseSession):
    """A ``PipelineMemory`` behind the session contract; ``final`` flushes what is pending.

    Closing discards the memory without a last flush (nothing could read it): a
    conversation's end is ``ingest(..., final=True)``.
    """

    def __init__(self, label: str, memory: PipelineMemory):
        super().__init__(label)
        self.memory = memory

    def _ingest(self, turns: list[Turn], final: bool) -> IngestReport:
        before, version = self.memory.usage(), self.memory.store.version
        self.memory.extend(turns)
        if final:
            self.memory.finish()
        usage = self.memory.usage()
        delta = type(usage)(usage.prompt_tokens - before.prompt_tokens,
                            usage.completion_tokens - before.completion_tokens, usage.cost_usd - before.cost_usd,
                            usage.calls - before.calls, usage.cached_calls - before.cached_calls, usage.estimated)
        written = sum(1 for op, _ in self.memory.store.changes_since(version) if op == "add")
        return IngestReport(items=written, usage=delta)

    def _query(self, question: str, k: int, now: datetime | None) -> Sequence[SystemHit]:
        return [_hit(h.entry, float(h.score)) for h in self.memory.recall(question, k, now)]

    def _contents(self) -> Sequence[SystemHit]:
        return [_hit(entry, 0.0) for entry in self.memory.store.entries(self.memory.conversation_id)]


def _hit(entry: MemoryEntry, score: float) -> SystemHit:
    return SystemHit(text=entry.text, score=score, turn_ids=entry.turn_ids, when=entry.start, kind=str(entry.kind),
                     id=entry.id, until=entry.end if entry.end != entry.start else None)
