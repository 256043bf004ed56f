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


def check_now(now: datetime) -> None:
    """Raise ``ValueError`` unless ``now`` is an aware datetime (the replay clock is UTC)."""
    if not isinstance(now, datetime) or now.tzinfo is None:
        raise ValueError(f"now must be an aware (UTC) datetime on the replay clock, got {now!r}")


def check_budget(budget: int) -> None:
    """Raise ``ValueError`` unless ``budget`` is a non-negative int of tokens."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise ValueError(f"budget must be a non-negative int of tokens, got {budget!r}")


@dataclass(frozen=True, slots=True)
class CompactRequest:
    """What one compaction is asked to do: reach ``budget`` tokens (by ``count``), at ``now``, with ``backend``.

    Construction checks the values: ``ValueError`` for a negative or non-int budget or a naive ``now``.

    Attributes:
        budget: the token budget the conversation's rendered memory should fit.
        backend: the LLM a rollup calls to condense.
        now: the time on the replay clock (aware, UTC) the compaction runs at.
        count: tokens of a text, as the budget measures them (``render_memory`` of the entries).
    """

    budget: int
    backend: Backend
    now: datetime
    count: TokenCount

    def __post_init__(self) -> None:
        check_now(self.now)
        check_budget(self.budget)


@runtime_checkable
class Rollup(Protocol):
    """Compacts one conversation's memory in a store toward a token budget, accounting for every turn."""

    def compact(self, store: MemoryStore, conversation_id: str, request: CompactRequest) -> RollupReport:
        """Compact ``conversation_id``'s entries in ``store`` as ``request`` asks, and report what it did.

        ``request`` (a ``CompactRequest``) carries the budget, the backend, the replay clock's ``now``
        and the token count.  A rollup edits only that conversation's entries, and an LLM failure
        leaves the store unchanged (the report then carries ``error``).
        """
        ...
