"""Degradation as data: every fallback a strategy takes is a typed record, and records add up.

A strategy that falls back still produces a memory, a different one: a chunk's
raw excerpt stands in for its summary, partial summaries are concatenated for a
failed merge, a rollup that could not reach its LLM leaves the memory as it
was. Each such fallback is one ``Degradation`` (what stood in, where, why), on
the strategy's result (``Summary.degraded``, ``RollupReport.degraded``), so a
replay can count them per stage (``DegradationTally``) and a result row can say
that its figures describe a degraded memory.

The kinds lyra-lab's own strategies report (``degraded.<stage>.<kind>``):

========================================  =====================================================
``degraded.summarize.chunk_excerpt``      map_reduce: a chunk's raw excerpt stands in for its summary
``degraded.summarize.merge_concatenated`` map_reduce: the partial summaries, concatenated, stand in for the merge
``degraded.summarize.step_excerpt``       refine: a failed step's raw excerpt is appended to the running summary
``degraded.flush.raw_turns``              replay: the summary came back empty; the window's raw turns stay instead
``degraded.rollup.unchanged``             a rollup step failed; the rollup left the memory as it was
========================================  =====================================================

A fallback whose failed call would fail the same way again (``recurs``: the provider refused
the request itself, ``BackendError.recurs``) is counted as ``failed.<stage>.<recurs>``
(``failed.answer.bad_request``, ``failed.summarize.context_overflow``…) instead: a resume
cannot heal it, so a plain resume keeps it and ``lyra-lab run --retry-failed`` runs it again.

>>> d = Degradation("summarize", "chunk_excerpt", "chunk 2/3", "attempts", "HTTP 503: overloaded", attempts=8)
>>> d.metric, d.failed_call
('degraded.summarize.chunk_excerpt', True)
>>> tally = DegradationTally.of([d]) + DegradationTally.of([d])
>>> tally.metrics(), tally.total, bool(DegradationTally())
({'degraded.summarize.chunk_excerpt': 2}, 2, False)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Literal, Mapping

if TYPE_CHECKING:
    from lyra_lab.backends import Recurs

#: Why a fallback was taken. The first four are failed LLM calls: ``attempts`` (every attempt the
#: backend allows failed), ``deadline`` (the call's deadline left no time for another attempt, or
#: passed), ``not_retryable`` (a failure retrying cannot fix: HTTP 400, 401…), ``error`` (any other
#: exception, e.g. from a backend of your own); ``empty``: the model answered with no text.
Cause = Literal["attempts", "deadline", "not_retryable", "error", "empty"]
CAUSES: tuple[Cause, ...] = ("attempts", "deadline", "not_retryable", "error", "empty")
_FAILED_CALL = frozenset({"attempts", "deadline", "not_retryable", "error"})


@dataclass(frozen=True, slots=True)
class Degradation:
    """One fallback a strategy took.

    Attributes:
        stage: where in the pipeline (``summarize``, ``flush``, ``rollup``…): the metric's middle part.
        kind: what stood in for the intended result (``chunk_excerpt``, ``merge_concatenated``,
            ``step_excerpt``, ``raw_turns``, ``unchanged``…): the metric's last part.
        where: which part of the work (``chunk 3/5``, ``merge``, ``flush 7``, ``time_ladder: digest 2024-W03``).
        cause: why (``Cause``).
        error: the failure's own message (an HTTP status and the provider's words, truncated).
        attempts: how many attempts the failed call made (None: no call failed, or not known).
        turn_ids: the turns whose memory the fallback changed (the chunk's turns, the window's…).
        recurs: the failed call would fail the same way again (``BackendError.recurs``, passed on;
            None: it may pass, or no call failed).
    """

    stage: str
    kind: str
    where: str
    cause: Cause
    error: str = ""
    attempts: int | None = None
    turn_ids: tuple[str, ...] = field(default=(), repr=False)
    recurs: Recurs | None = None

    def __post_init__(self) -> None:
        for name in ("stage", "kind"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value or "." in value:
                raise ValueError(f"Degradation.{name} must be a non-empty name without dots, got {value!r}")
        if self.cause not in CAUSES:
            raise ValueError(f"Degradation.cause must be one of {', '.join(CAUSES)}; got {self.cause!r}")
        object.__setattr__(self, "error", str(self.error)[:500])
        object.__setattr__(self, "turn_ids", tuple(self.turn_ids))

    @property
    def metric(self) -> str:
        """``degraded.<stage>.<kind>``, or ``failed.<stage>.<recurs>`` when it recurs: its count's name in rows."""
        return f"failed.{self.stage}.{self.recurs}" if self.recurs else f"degraded.{self.stage}.{self.kind}"

    @property
    def failed_call(self) -> bool:
        """True when an LLM call failed for good (not an empty answer)."""
        return self.cause in _FAILED_CALL

    def fields(self) -> dict[str, Any]:
        """The record as plain JSON fields (for a run-log event); ``turn_ids`` as a count and the first and last."""
        ids = self.turn_ids
        return {"stage": self.stage, "kind": self.kind, "metric": self.metric, "where": self.where,
                "cause": self.cause, "attempts": self.attempts, "error": self.error[:300], "recurs": self.recurs,
                "turns": len(ids), "first_turn": ids[0] if ids else None, "last_turn": ids[-1] if ids else None}


@dataclass(frozen=True)
class DegradationTally:
    """How many fallbacks of each ``(stage, kind)`` a replay (or a run) took; adds up with ``+``.

    Attributes:
        counts: ``(stage, kind)`` → number of fallbacks a resume could heal.
        failed: ``(stage, recurs)`` → number of fallbacks whose call would fail the same way again.
    """

    counts: Mapping[tuple[str, str], int] = field(default_factory=dict, hash=False)
    failed: Mapping[tuple[str, str], int] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "counts", {k: int(v) for k, v in sorted(self.counts.items()) if v})
        object.__setattr__(self, "failed", {k: int(v) for k, v in sorted(self.failed.items()) if v})

    @classmethod
    def of(cls, degradations: Iterable[Degradation]) -> "DegradationTally":
        """The tally of ``degradations``."""
        degradations = tuple(degradations)
        return cls(Counter((d.stage, d.kind) for d in degradations if not d.recurs),
                   Counter((d.stage, d.recurs) for d in degradations if d.recurs))

    @property
    def total(self) -> int:
        """Every fallback, healable or not (a row's ``degraded`` column)."""
        return sum(self.counts.values()) + sum(self.failed.values())

    def __bool__(self) -> bool:
        return bool(self.counts) or bool(self.failed)

    def __add__(self, other: "DegradationTally") -> "DegradationTally":
        if not isinstance(other, DegradationTally):
            return NotImplemented
        return DegradationTally(Counter(self.counts) + Counter(other.counts),
                                Counter(self.failed) + Counter(other.failed))

    def __radd__(self, other: object) -> "DegradationTally":
        # so that sum(tallies) works from its start value 0
        if other == 0:
            return self
        return self.__add__(other) if isinstance(other, DegradationTally) else NotImplemented

    def by_stage(self) -> dict[str, int]:
        """Fallbacks per stage."""
        out: Counter[str] = Counter()
        for (stage, _), n in [*self.counts.items(), *self.failed.items()]:
            out[stage] += n
        return dict(out)

    def metrics(self) -> dict[str, int]:
        """``{"degraded.<stage>.<kind>": n, "failed.<stage>.<recurs>": n}`` for every kind that occurred."""
        return {**{f"degraded.{stage}.{kind}": n for (stage, kind), n in self.counts.items()},
                **{f"failed.{stage}.{recurs}": n for (stage, recurs), n in self.failed.items()}}
