"""The contract of a rollup: compact a conversation's memory under a token budget."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Protocol, runtime_checkable

from lyra_lab._degradation import Degradation
from lyra_lab.backends import Backend, Completion, Usage
from lyra_lab.memory import MemoryStore

TokenCount = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class RollupReport:
    """What one compaction did.

    Every source turn id that was in the memory before is, afterwards, either
    still ``kept`` in an entry, ``folded`` into a digest that names it, or
    reported ``dropped``.  A compaction whose LLM call failed changed nothing:
    it carries ``error`` and one ``Degradation`` of kind ``unchanged`` in
    ``degraded`` (which step failed, why, after how many attempts).
    """

    ran: bool
    tokens_before: int
    tokens_after: int
    budget: int
    kept: tuple[str, ...] = ()
    folded: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    digests: tuple[str, ...] = ()  # ids of the entries written
    calls: tuple[Completion, ...] = ()
    error: str | None = None  # set when the LLM failed and nothing was changed
    reason: str = ""
    degraded: tuple[Degradation, ...] = ()

    @property
    def usage(self) -> Usage:
        return sum((c.usage for c in self.calls), Usage())


@runtime_checkable
class Rollup(Protocol):
    def compact(
        self,
        store: MemoryStore,
        conversation_id: str,
        *,
        budget: int,
        backend: Backend,
        now: datetime,
        count: TokenCount,
    ) -> RollupReport: ...
