"""What the rollups share: the registry, the compaction skeleton, LLM calls that fail cleanly, turn accounting.

A rollup is a frozen dataclass on ``BaseRollup`` with one method,
``step(compaction)``: it reads the memory as it was (``compaction.before``),
asks the LLM through ``compaction.ask`` and returns an ``Edit`` (entries to
write, ids to remove, why) or ``skip(reason)``.  ``BaseRollup.compact`` does
the rest (its ``CompactRequest`` checked ``now`` and ``budget``): measures the memory before and after,
commits the edit in one ``store.apply`` (nothing at all if an LLM call failed,
the report then carrying ``error``), and accounts for every source turn.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Iterable, NamedTuple, Sequence

from lyra_lab._degradation import Cause, Degradation
from lyra_lab._params import Strategy, strategy_name
from lyra_lab._registry import Registry
from lyra_lab.backends import Backend, BackendError, Completion, Recurs
from lyra_lab.memory import EntryKind, MemoryEntry, MemoryStore, entry_line, memory_order, render_memory
from lyra_lab.rollup._prompts import PARAMS
from lyra_lab.rollup._types import CompactRequest, Rollup, RollupReport

ROLLUPS: Registry[Rollup] = Registry("rollup")


class RollupFailed(Exception):
    """An LLM call of a rollup failed; the rollup commits nothing and reports ``error``.

    Attributes:
        step: which call failed (``digest 2024-W03``, ``facts batch 2/3``…; "" when not named).
        cause: why (``attempts``, ``deadline``, ``not_retryable``, ``error``, ``empty``).
        attempts: requests the failed call sent, when the backend said.
        recurs: the failed call would fail the same way again (``BackendError.recurs``, passed on), or None.
    """

    def __init__(self, message: str, *, step: str = "", cause: Cause = "error", attempts: int | None = None,
                 recurs: Recurs | None = None):
        super().__init__(message)
        self.step = step
        self.cause: Cause = cause
        self.attempts = attempts
        self.recurs: Recurs | None = recurs


def ask(backend: Backend, prompt: str, max_tokens: int, step: str = "") -> Completion:
    """One user message, temperature 0; any exception or an empty reply becomes ``RollupFailed``.

    No deadline: a rollup call is bounded by its backend's attempts and per-attempt ``timeout_s``.
    ``step`` names the call in the report's degradation when it fails.
    """
    try:
        completion = backend.complete([{"role": "user", "content": prompt}], max_tokens=max_tokens, **PARAMS)
    except BackendError as exc:
        raise RollupFailed(f"BackendError: {exc}", step=step, cause=exc.gave_up, attempts=exc.attempts,
                           recurs=exc.recurs) from exc
    except Exception as exc:  # a network error, a bug in a user's backend: all fail clean
        raise RollupFailed(f"{type(exc).__name__}: {exc}", step=step) from exc
    if not completion.text.strip():
        raise RollupFailed(f"{backend.name}/{backend.model} returned an empty completion", step=step, cause="empty")
    return completion


def transcript(entries: Iterable[MemoryEntry]) -> str:
    """The entries as dated lines, oldest first, for a prompt."""
    return "\n".join(entry_line(e) for e in sorted(entries, key=memory_order))


def short_hash(*parts: Iterable[str] | str) -> str:
    """A 10-hex-digit hash of strings (ids of what a digest covers), for stable digest ids."""
    h = hashlib.blake2b(digest_size=5)
    for part in parts:
        for item in [part] if isinstance(part, str) else part:
            h.update(item.encode("utf-8"))
            h.update(b"\x00")
    return h.hexdigest()


def turn_ids(entries: Iterable[MemoryEntry]) -> set[str]:
    return {t for e in entries for t in e.turn_ids}


def covered_turns(entries: Iterable[MemoryEntry]) -> tuple[str, ...]:
    """The sorted source turn ids of ``entries``: the provenance of an entry condensing them."""
    return tuple(sorted(turn_ids(entries)))


class Written(NamedTuple):
    """A condensed entry's own part: its id, conversation, kind, text (the model's reply) and meta."""

    id: str
    conversation_id: str
    kind: EntryKind
    text: str
    meta: dict[str, object]


def condensed(written: Written, sources: Sequence[MemoryEntry], *, session_ids: tuple[str, ...],
              either_end: bool = False) -> MemoryEntry:
    """A level-1 entry condensing ``sources``: their turns (``covered_turns``) and their time span.

    The span runs from the earliest ``start`` to the latest ``end`` of the sources (None when
    none has one); with ``either_end`` a source missing one end stands in with its other.
    """
    if either_end:
        starts = [t for e in sources if (t := e.start or e.end) is not None]
        ends = [t for e in sources if (t := e.end or e.start) is not None]
    else:
        starts = [e.start for e in sources if e.start is not None]
        ends = [e.end for e in sources if e.end is not None]
    return MemoryEntry(id=written.id, conversation_id=written.conversation_id, kind=written.kind,
                       text=written.text, turn_ids=covered_turns(sources), session_ids=session_ids,
                       start=min(starts) if starts else None, end=max(ends) if ends else None, level=1,
                       meta=written.meta)




def failed(rollup: str, exc: RollupFailed, entries: Sequence[MemoryEntry]) -> Degradation:
    """The degradation of a compaction that failed: ``rollup.unchanged``, naming the rollup and its step."""
    where = f"{rollup}: {exc.step}" if exc.step else rollup
    return Degradation("rollup", "unchanged", where, exc.cause, str(exc), exc.attempts,
                       tuple(sorted(turn_ids(entries))), exc.recurs)


@dataclass
class Compaction:
    """One ``compact`` call in progress: what a rollup's ``step`` reads, and the LLM calls it made.

    Attributes:
        request: what was asked: ``request.budget``, ``request.backend``, ``request.now``, ``request.count``.
        before: the conversation's entries when the compaction started.
        tokens_before: tokens of ``render_memory(before)`` by ``count``.
        calls: completions so far; on a failure they go into the report (their cost was real).
    """

    store: MemoryStore
    conversation_id: str
    request: CompactRequest
    before: list[MemoryEntry]
    tokens_before: int
    calls: list[Completion] = field(default_factory=list)

    def ask(self, prompt: str, max_tokens: int, step: str = "") -> Completion:
        """``ask`` the backend and record the completion in ``calls``; a failure raises ``RollupFailed``.

        ``step`` names the call (``gist of session s3``) in the degradation reported if it fails.
        """
        completion = ask(self.request.backend, prompt, max_tokens, step)
        self.calls.append(completion)
        return completion

    def report(self, after: Sequence[MemoryEntry], written: Sequence[MemoryEntry], reason: str) -> RollupReport:
        """A report that accounts for every source turn of ``before``: kept, folded or dropped.

        ``folded`` are turns now covered by an entry this run wrote (``written``); ``kept`` the
        others still in memory (``after``); ``dropped`` those no longer anywhere.
        """
        in_new = turn_ids(written)
        remaining = turn_ids(after)
        source = turn_ids(self.before) | in_new
        return RollupReport(
            ran=True,
            tokens_before=self.tokens_before,
            tokens_after=self.tokens(after),
            budget=self.request.budget,
            kept=tuple(sorted(remaining - in_new)),
            folded=tuple(sorted(in_new & remaining)),
            dropped=tuple(sorted(source - remaining)),
            digests=tuple(e.id for e in written),
            calls=tuple(self.calls),
            reason=reason,
        )

    def unchanged(self, reason: str, error: str | None = None,
                  degraded: Sequence[Degradation] = ()) -> RollupReport:
        """The report of a compaction that changed nothing (not needed, or failed: then ``error`` and ``degraded``)."""
        return RollupReport(
            ran=False, tokens_before=self.tokens_before, tokens_after=self.tokens_before, budget=self.request.budget,
            kept=tuple(sorted(turn_ids(self.before))), calls=tuple(self.calls), error=error, reason=reason,
            degraded=tuple(degraded),
        )

    def tokens(self, entries: Iterable[MemoryEntry]) -> int:
        """Tokens of ``render_memory(entries)``: what budgets are measured on."""
        return self.request.count(render_memory(entries))


@dataclass(frozen=True)
class Edit:
    """What a compaction step decided: entries to write and entry ids to remove (or, ``ran=False``, nothing)."""

    reason: str
    add: Sequence[MemoryEntry] = ()
    remove: Sequence[str] = ()
    ran: bool = True


def skip(reason: str) -> Edit:
    """The step's answer when the memory needs no change."""
    return Edit(reason, ran=False)


class BaseRollup(Strategy):
    """The compaction skeleton; a subclass (a frozen dataclass) supplies ``step``.

    No fields of its own; ``Strategy`` checks the subclass's declared parameters on construction.
    """

    def compact(self, store: MemoryStore, conversation_id: str, request: CompactRequest) -> RollupReport:
        """Compact ``conversation_id``'s memory as ``request`` asks: toward its budget, at its ``now``."""
        before = store.entries(conversation_id)
        run = Compaction(store, conversation_id, request, before, request.count(render_memory(before)))
        try:
            edit = self.step(run)
        except RollupFailed as exc:
            return run.unchanged("llm failed", str(exc), [failed(strategy_name(self), exc, before)])
        if not edit.ran:
            return run.unchanged(edit.reason)
        store.apply(add=edit.add, remove=edit.remove)
        return run.report(store.entries(conversation_id), edit.add, edit.reason)

    def step(self, compaction: Compaction) -> Edit:
        """Decide the edit (calling the LLM through ``compaction.ask``); must not touch the store."""
        raise NotImplementedError(f"{type(self).__name__} must define step(compaction)")
