"""When the replay turns pending turns into memory: end of session, every N turns, an idle gap.

A trigger looks only at the turns fed since the last time it fired (``pending``)
and the turn that comes next on the replay clock (``next_turn``, None at the
end of the conversation).  It never looks at the wall clock, so a replay of
months of chat behaves the same whether it takes seconds or hours.

The end of a conversation always flushes what is pending (the engine does
that, whatever the trigger), so no turn is left out of the summaries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence, runtime_checkable

from lyra_lab._params import Strategy, param
from lyra_lab._registry import Registry
from lyra_lab.corpus import Turn

TRIGGERS: Registry["Trigger"] = Registry("trigger")


@runtime_checkable
class Trigger(Protocol):
    """Decides, after each fed turn, whether the pending turns are summarized now."""

    def fires(self, pending: Sequence[Turn], next_turn: Turn | None) -> bool: ...


@TRIGGERS.register("session_end")
@dataclass(frozen=True)
class SessionEnd:
    """Fire when the next turn belongs to another session (or there is none)."""

    def fires(self, pending: Sequence[Turn], next_turn: Turn | None) -> bool:
        if not pending:
            return False
        return next_turn is None or next_turn.session_id != pending[-1].session_id


@TRIGGERS.register("every_turns")
@dataclass(frozen=True)
class EveryTurns(Strategy):
    """Fire as soon as ``n`` turns are pending (sessions are ignored)."""

    n: int = param(20, ge=1, doc="pending turns that make it fire.")

    def fires(self, pending: Sequence[Turn], next_turn: Turn | None) -> bool:
        return len(pending) >= self.n


@TRIGGERS.register("idle_gap")
@dataclass(frozen=True)
class IdleGap(Strategy):
    """Fire when the next turn comes at least ``hours`` after the last pending one.

    This is how a companion app decides "the user went away": on the replay
    clock, from the turns' own timestamps.  Turns without timestamps carry the
    previous turn's time (see the engine), so they never open a gap.
    """

    hours: float = param(6.0, gt=0, doc="the gap (on the replay clock) that counts as the user going away.")

    def fires(self, pending: Sequence[Turn], next_turn: Turn | None) -> bool:
        if not pending:
            return False
        if next_turn is None:
            return True
        last, nxt = pending[-1].timestamp, next_turn.timestamp
        if last is None or nxt is None:
            return False
        return (nxt - last).total_seconds() >= self.hours * 3600.0
