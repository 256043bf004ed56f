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
from typing import Any, Mapping, Sequence

from lyra_lab._registry import ConfigError, Registry
from lyra_lab._params import param
from lyra_lab.backends import Backend, Embedder, FakeLLM
from lyra_lab.corpus import Turn
from lyra_lab.memory import MemoryEntry
from lyra_lab.replay import Pipeline, PipelineMemory, Registries, strategy_spec
from lyra_lab.systems._base import BaseSession, BaseSystem
from lyra_lab.systems._types import SYSTEMS, IngestReport, Needs, SystemHit

DEFAULT_PIPELINE = {"chunker": {"name": "turn_window"}, "summarizer": "none"}


def pipeline_json(value: Any) -> str:
    """A pipeline spec (dict, JSON text or ``Pipeline``) as canonical JSON of its resolved spec."""
    pipeline = value if isinstance(value, Pipeline) else Pipeline.from_dict(_mapping(value, "pipeline"))
    return json.dumps(pipeline.to_dict(), sort_keys=True)


def recaller_json(value: Any) -> str:
    """A recaller spec (a name, dict, JSON text or recaller) as canonical JSON of its resolved spec."""
    if isinstance(value, str) and not value.lstrip().startswith("{"):
        value = {"name": value}
    recaller = Registries.default().recallers.build(_mapping(value, "recaller") if not _is_strategy(value) else value)
    return json.dumps(strategy_spec(recaller), sort_keys=True)


def _is_strategy(value: Any) -> bool:
    return not isinstance(value, (str, Mapping))


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
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

    pipeline: str = param(json.dumps(DEFAULT_PIPELINE), convert=pipeline_json,
                          allowed="a pipeline table (chunker, summarizer, rollup, trigger, budgets)",
                          check=lambda text: bool(json.loads(text)),
                          doc="the memory pipeline, as in an experiment file's pipeline tables.")
    recaller: str = param("bm25", convert=recaller_json, allowed="a recaller name or table",
                          check=lambda text: bool(json.loads(text)), doc="how a query is answered.")

    def build(self, registries: Registries | None = None) -> tuple[Pipeline, Any]:
        """The ``Pipeline`` and the recaller these specs name."""
        regs = registries or Registries.default()
        return Pipeline.from_dict(json.loads(self.pipeline), regs), regs.recallers.build(json.loads(self.recaller))

    def label(self) -> str:
        pipeline, recaller = self.build()
        names = pipeline.kind_names()
        parts = [names["chunker"]] + [names[k] for k in ("summarizer", "rollup") if names[k] != "none"]
        return f"pipeline:{'+'.join(parts)}+{Registry.spec(recaller)['name']}"

    def needs(self) -> Needs:
        pipeline, recaller = self.build()
        return Needs(backend=pipeline.summarizer is not None or pipeline.rollup is not None,
                     embedder=bool(recaller.needs_embedder()))

    def open(self, conversation_id: str, backend: Backend | None, embedder: Embedder | None) -> "PipelineSession":
        pipeline, recaller = self.build()
        return PipelineSession(self.label(), PipelineMemory(conversation_id, pipeline, recaller,
                                                            backend=backend or FakeLLM(), embedder=embedder))


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
