"""The contract of a summarizer: chunks in, one summary with every call it made out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, Protocol, Sequence, runtime_checkable

from lyra_lab._degradation import Degradation
from lyra_lab.backends import Backend, Completion, Usage
from lyra_lab.chunking import Chunk

ProgressCallback = Callable[["ProgressEvent"], None]

#: The stages of a summarizer's progress events, in the order they come.
Stage = Literal["load", "strategy", "chunk_done", "merge_started", "merge_done", "complete"]


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """A stage of long work: load, strategy, chunk_done, merge_started, merge_done, complete."""

    stage: Stage
    i: int | None = None
    n: int | None = None
    ok: bool | None = None
    duration_s: float | None = None
    detail: Mapping[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True, slots=True)
class Summary:
    """What a summarizer produced and how.

    ``degraded`` holds one ``Degradation`` per fallback the summarizer took
    (a chunk's raw excerpt for its summary, concatenation for a failed merge,
    a failed refine step): what stood in, for which part, and why.
    ``partial`` is true when any fallback was used, and ``errors`` has each
    failure's message.
    """

    text: str
    turn_ids: tuple[str, ...]
    calls: tuple[Completion, ...] = ()
    decision: str | None = None
    partial: bool = False
    errors: tuple[str, ...] = ()
    degraded: tuple[Degradation, ...] = ()

    @property
    def usage(self) -> Usage:
        return sum((c.usage for c in self.calls), Usage())


@runtime_checkable
class Summarizer(Protocol):
    def summarize(
        self,
        chunks: Sequence[Chunk],
        backend: Backend,
        focus: str | None = None,
        on_event: ProgressCallback | None = None,
    ) -> Summary: ...
