"""What every summarizer shares: parameter checks, the decision, provenance, the final record."""

from __future__ import annotations

import time
from typing import Any, Sequence

from lyra_lab.backends import Backend, BackendError, Completion
from lyra_lab.chunking import Chunk
from lyra_lab.summarize._calls import CallOutcome
from lyra_lab.summarize._events import emit
from lyra_lab.summarize._prompts import Prompts
from lyra_lab.summarize._types import ProgressCallback, Stage, Summary


def check_params(owner: Any, **timeouts: float) -> None:
    """Validate the generation parameters and timeouts of ``owner``; coerce its prompts."""
    name = getattr(type(owner), "registry_name", type(owner).__name__)
    if isinstance(owner.max_tokens, bool) or not isinstance(owner.max_tokens, int) or owner.max_tokens < 1:
        raise ValueError(f"{name}: max_tokens must be a positive integer, got {owner.max_tokens!r}")
    if isinstance(owner.temperature, bool) or not isinstance(owner.temperature, (int, float)) \
            or not 0 <= owner.temperature <= 2:
        raise ValueError(f"{name}: temperature must be a number in [0, 2], got {owner.temperature!r}")
    for key, value in timeouts.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ValueError(f"{name}: {key} must be a positive number of seconds, got {value!r}")
    if owner.focus is not None and not isinstance(owner.focus, str):
        raise ValueError(f"{name}: focus must be a string (an instruction) or absent, got {owner.focus!r}")
    # Specs from TOML/JSON give prompts as a dict of overrides; hold a Prompts.
    object.__setattr__(owner, "prompts", Prompts.coerce(owner.prompts))


def focus_of(owner: Any, focus: str | None) -> str | None:
    """The focus a call uses: the caller's ``focus`` argument, else the strategy's own ``focus`` field."""
    return owner.focus if focus is None else focus


def check_count(owner: Any, **values: int) -> None:
    """Raise ValueError naming the parameter when a value is not a positive integer."""
    name = getattr(type(owner), "registry_name", type(owner).__name__)
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}: {key} must be a positive integer, got {value!r}")


def decision_of(chunks: Sequence[Chunk], default: str) -> str:
    """The chunker's decision when ``chunks`` is a ``ChunkPlan``, else the summarizer's own."""
    return getattr(chunks, "decision", None) or default


def turn_ids_of(chunks: Sequence[Chunk]) -> tuple[str, ...]:
    """The union of the chunks' turn ids, in order of first appearance."""
    return tuple(dict.fromkeys(t for c in chunks for t in c.turn_ids))


def joined_text(chunks: Sequence[Chunk]) -> str:
    """The chunks' text with overlaps dropped: the transcript they were cut from."""
    return "".join(c.text[c.overlap_chars:] for c in chunks)


class Run:
    """The bookkeeping of one ``summarize`` call: events, calls made, errors, timing."""

    def __init__(self, summarizer: str, chunks: Sequence[Chunk], decision: str,
                 on_event: ProgressCallback | None):
        self.started = time.monotonic()
        self.summarizer = summarizer
        self.chunks = chunks
        self.decision = decision
        self.on_event = on_event
        self.calls: list[Completion] = []
        self.errors: list[str] = []
        emit(on_event, "load", n=len(chunks), detail={
            "chunks": len(chunks), "chars": len(joined_text(chunks)), "turns": len(turn_ids_of(chunks))})
        emit(on_event, "strategy", n=len(chunks), detail={
            "summarizer": summarizer, "decision": decision, "reason": getattr(chunks, "reason", None)})

    def emit(self, stage: Stage, **fields: Any) -> None:
        emit(self.on_event, stage, **fields)

    def chunk_done(self, i: int, n: int, outcome: CallOutcome) -> None:
        """Emit ``chunk_done`` for call ``i`` of ``n`` (its error, if any, in ``detail``)."""
        self.emit("chunk_done", i=i, n=n, ok=outcome.error is None, duration_s=outcome.duration_s,
                  detail={"error": outcome.error} if outcome.error else {})

    def finish(self, text: str, partial: bool = False) -> Summary:
        """Emit ``complete`` and build the summary."""
        partial = partial or bool(self.errors)
        emit(self.on_event, "complete", ok=not partial, duration_s=time.monotonic() - self.started, detail={
            "decision": self.decision, "calls": len(self.calls), "partial": partial,
            "errors": len(self.errors)})
        return Summary(text=text.strip(), turn_ids=turn_ids_of(self.chunks), calls=tuple(self.calls),
                       decision=self.decision, partial=partial, errors=tuple(self.errors))

    def fail(self, backend: Backend, what: str) -> BackendError:
        """Emit a failed ``complete`` and return the error to raise: nothing usable was produced."""
        emit(self.on_event, "complete", ok=False, duration_s=time.monotonic() - self.started, detail={
            "decision": self.decision, "calls": len(self.calls), "partial": True, "errors": len(self.errors)})
        first = self.errors[0] if self.errors else "no detail"
        return BackendError(backend.name, f"{self.summarizer}: {what}; first error: {first}")
