"""What every summarizer shares: parameter declarations, the decision, provenance, the final record.

A summarizer is a frozen dataclass on ``BaseSummarizer`` with one method,
``fold(chunks, backend, focus, run)``: it makes its calls for a non-empty list
of chunks and returns ``run.finish(text)`` (or raises ``run.fail(...)``).
``BaseSummarizer.summarize`` does the rest: resolves ``focus``, opens the
``Run`` (the ``load`` and ``strategy`` events, the decision) and answers no
chunks with an empty summary.
"""

from __future__ import annotations

import time
from typing import Any, Protocol, Sequence

from lyra_lab._degradation import Degradation
from lyra_lab.backends import Backend, BackendError, Completion
from lyra_lab.chunking import Chunk, ChunkPlan
from lyra_lab.summarize._calls import CallOutcome
from lyra_lab.summarize._events import emit
from lyra_lab.summarize._prompts import DEFAULT_PROMPTS, Prompts
from lyra_lab.summarize._types import ProgressCallback, Stage, Summary
from lyra_lab._params import Strategy, param, strategy_name


def temperature_param() -> float:
    """The ``temperature`` parameter every summarizer has."""
    return param(0.0, ge=0, le=2, doc="sampling temperature (0: deterministic).")


def prompts_param() -> Prompts:
    """The ``prompts`` parameter every summarizer has; specs from TOML/JSON give a dict of overrides."""
    return param(DEFAULT_PROMPTS, convert=Prompts.coerce, allowed="a table of templates overriding some defaults")


def focus_param() -> str | None:
    """The ``focus`` parameter every summarizer has."""
    return param(None, doc=(
        "an instruction (\"the user's plans and dates\") put into every prompt through the ``focus`` template; "
        "None: no focus (the prompts are the plain defaults).  A ``focus`` argument to ``summarize`` overrides "
        "it for that call."))


class Focused(Protocol):
    """A summarizer with a ``focus`` field (what its prompts ask to keep)."""

    @property
    def focus(self) -> str | None: ...


def focus_of(owner: Focused, focus: str | None) -> str | None:
    """The focus a call uses: the caller's ``focus`` argument, else the strategy's own ``focus`` field."""
    return owner.focus if focus is None else focus


def decision_of(chunks: Sequence[Chunk], default: str) -> str:
    """The chunker's decision when ``chunks`` is a ``ChunkPlan``, else the summarizer's own."""
    return (chunks.decision if isinstance(chunks, ChunkPlan) else None) or default


def turn_ids_of(chunks: Sequence[Chunk]) -> tuple[str, ...]:
    """The union of the chunks' turn ids, in order of first appearance."""
    return tuple(dict.fromkeys(t for c in chunks for t in c.turn_ids))


def joined_text(chunks: Sequence[Chunk]) -> str:
    """The chunks' text with overlaps dropped: the transcript they were cut from."""
    return "".join(c.text[c.overlap_chars:] for c in chunks)


class Run:
    """The bookkeeping of one ``summarize`` call: events, calls made, errors, fallbacks, timing."""

    def __init__(self, summarizer: str, chunks: Sequence[Chunk], decision: str,
                 on_event: ProgressCallback | None):
        self.started = time.monotonic()
        self.summarizer = summarizer
        self.chunks = chunks
        self.decision = decision
        self.on_event = on_event
        self.calls: list[Completion] = []
        self.errors: list[str] = []
        self.failures: list[CallOutcome] = []
        self.degraded: list[Degradation] = []
        emit(on_event, "load", n=len(chunks), detail={
            "chunks": len(chunks), "chars": len(joined_text(chunks)), "turns": len(turn_ids_of(chunks))})
        emit(on_event, "strategy", n=len(chunks), detail={
            "summarizer": summarizer, "decision": decision, "reason": chunks.reason if isinstance(chunks, ChunkPlan) else None})

    def emit(self, stage: Stage, **fields: Any) -> None:
        emit(self.on_event, stage, **fields)

    def chunk_done(self, i: int, n: int, outcome: CallOutcome) -> None:
        """Emit ``chunk_done`` for call ``i`` of ``n`` (its error, if any, in ``detail``)."""
        self.emit("chunk_done", i=i, n=n, ok=outcome.error is None, duration_s=outcome.duration_s,
                  detail={"error": outcome.error} if outcome.error else {})

    def degrade(self, kind: str, where: str, outcome: CallOutcome, turn_ids: Sequence[str] = ()) -> None:
        """Record a fallback: ``kind`` stood in for the result of the failed call ``where`` (``chunk 2/5``).

        The error message goes to ``errors`` as ``"<where>: <error>"``; the typed record to ``degraded``.
        """
        error = self.lost(where, outcome)
        self.degraded.append(Degradation("summarize", kind, where, outcome.cause or "error", error,
                                         outcome.attempts, tuple(turn_ids), outcome.recurs))

    def lost(self, where: str, outcome: CallOutcome) -> str:
        """Record the failed call ``where`` (its message in ``errors``, the outcome kept for ``fail``); its error."""
        error = outcome.error or "failed"
        self.errors.append(f"{where}: {error}")
        self.failures.append(outcome)
        return error

    def finish(self, text: str, partial: bool = False) -> Summary:
        """Emit ``complete`` and build the summary."""
        partial = partial or bool(self.errors) or bool(self.degraded)
        emit(self.on_event, "complete", ok=not partial, duration_s=time.monotonic() - self.started, detail={
            "decision": self.decision, "calls": len(self.calls), "partial": partial,
            "errors": len(self.errors), "degraded": [d.metric for d in self.degraded]})
        return Summary(text=text.strip(), turn_ids=turn_ids_of(self.chunks), calls=tuple(self.calls),
                       decision=self.decision, partial=partial, errors=tuple(self.errors),
                       degraded=tuple(self.degraded))

    def fail(self, backend: Backend, what: str) -> BackendError:
        """Emit a failed ``complete`` and return the error to raise: nothing usable was produced.

        The error carries the first failed call's status, attempts and cause, and recurs when every
        failed call would fail the same way again (their ``recurs``, passed on, never decided here).
        """
        emit(self.on_event, "complete", ok=False, duration_s=time.monotonic() - self.started, detail={
            "decision": self.decision, "calls": len(self.calls), "partial": True, "errors": len(self.errors)})
        first = self.errors[0] if self.errors else "no detail"
        lost = self.failures[0] if self.failures else None
        recurs = lost.recurs if lost is not None and all(f.recurs for f in self.failures) else None
        cause = lost.cause if lost is not None else None
        return BackendError(backend.name, f"{self.summarizer}: {what}; first error: {first}",
                            status=lost.status if lost is not None else None,
                            attempts=lost.attempts if lost is not None and lost.attempts is not None else 1,
                            gave_up=cause if cause in ("attempts", "deadline", "not_retryable") else "attempts",
                            recurs=recurs)


class BaseSummarizer(Strategy):
    """The ``summarize`` skeleton; a subclass (a frozen dataclass) supplies ``fold``.

    No fields of its own, so each summarizer keeps its own field order; ``Strategy``
    checks the subclass's declared parameters on construction.  Every summarizer declares
    ``focus`` (``focus_param()``), the focus its prompts use when a call gives none.
    """

    focus: str | None  # declared here for the type checker; each subclass's dataclass field holds it

    @property
    def name(self) -> str:
        """The registered name (the class name if unregistered)."""
        return strategy_name(self)

    def decision(self, chunks: Sequence[Chunk]) -> str:
        """The decision recorded when ``chunks`` carries none of its own (not a ``ChunkPlan``)."""
        return self.name

    def summarize(self, chunks: Sequence[Chunk], backend: Backend, focus: str | None = None,
                  on_event: ProgressCallback | None = None) -> Summary:
        """One summary of ``chunks`` (``focus``: overrides the strategy's own for this call)."""
        focus = focus_of(self, focus)
        run = Run(self.name, chunks, decision_of(chunks, self.decision(chunks)), on_event)
        if not chunks:
            return run.finish("")
        return self.fold(chunks, backend, focus, run)

    def fold(self, chunks: Sequence[Chunk], backend: Backend, focus: str | None, run: Run) -> Summary:
        """The summary of a non-empty ``chunks``: the calls, recorded in ``run``, then ``run.finish``."""
        raise NotImplementedError(f"{type(self).__name__} must define fold(chunks, backend, focus, run)")
