"""The replay schedule: turns on a virtual clock, trigger flushes, and probes at their ``asked_at``.

Planning is pure (no memory, no LLM): it orders the conversation's turns by
their own timestamps, decides where the trigger fires, and places each probe
before the first turn at or after its ``asked_at``.  Because the schedule is
known up front, the engine can summarize later windows in a thread pool while
the owner thread is still writing earlier ones, without changing the result.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Literal, Sequence

from lyra_lab.corpus import Conversation, Probe, Turn
from lyra_lab.replay._triggers import Trigger

# The clock of a conversation with no timestamps at all starts here (one second per turn).
SYNTHETIC_EPOCH = datetime(2000, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Step:
    """One thing the engine does, at ``now`` on the replay clock.

    ``turn``: a turn arrives; ``flush``: the trigger fired for ``turns``;
    ``probe``: the probe is asked.
    """

    kind: Literal["turn", "flush", "probe"]
    now: datetime
    turn: Turn | None = None
    turns: tuple[Turn, ...] = ()
    probe: Probe | None = None
    seq: int = 0  # flush number (0-based) for flush steps


def clock_order(conversation: Conversation) -> list[Turn]:
    """The conversation's turns in timestamp order, each with a timestamp.

    The sort is stable, so turns with equal times keep their source order.  A
    turn without a timestamp carries the previous turn's time (its source
    position is the best evidence of when it happened); leading turns without
    one take the first known time, and a conversation with no times at all gets
    ``SYNTHETIC_EPOCH`` plus one second per turn.
    """
    turns = list(conversation.turns())
    known = [t.timestamp for t in turns if t.timestamp is not None]
    if not known:
        return [dataclasses.replace(t, timestamp=SYNTHETIC_EPOCH + timedelta(seconds=i)) for i, t in enumerate(turns)]
    filled: list[Turn] = []
    last = known[0]
    for turn in turns:
        if turn.timestamp is None:
            turn = dataclasses.replace(turn, timestamp=last)
        else:
            last = turn.timestamp
        filled.append(turn)
    order = sorted(range(len(filled)), key=lambda i: (stamp(filled[i]), i))
    return [filled[i] for i in order]


def plan(conversation: Conversation, probes: Sequence[Probe], trigger: Trigger) -> list[Step]:
    """The full schedule of one replay.

    A probe with ``asked_at`` is asked before the first turn whose timestamp is
    at or after it, so its recall sees only turns strictly before ``asked_at``.
    A probe without ``asked_at`` (or asked after the last turn) is asked at the
    end, after the final flush.  Probes asked at the same moment keep their
    input order.
    """
    turns = clock_order(conversation)
    timed = sorted(((p.asked_at, p) for p in probes if p.asked_at is not None), key=lambda pair: pair[0])
    untimed = [p for p in probes if p.asked_at is None]
    steps: list[Step] = []
    pending: list[Turn] = []
    seq = 0
    pi = 0
    for i, turn in enumerate(turns):
        now = stamp(turn)
        while pi < len(timed) and timed[pi][0] <= now:
            steps.append(Step("probe", now=timed[pi][0], probe=timed[pi][1]))
            pi += 1
        steps.append(Step("turn", now=now, turn=turn))
        pending.append(turn)
        next_turn = turns[i + 1] if i + 1 < len(turns) else None
        # The end of the conversation always flushes, whatever the trigger says.
        if next_turn is None or trigger.fires(pending, next_turn):
            steps.append(Step("flush", now=now, turns=tuple(pending), seq=seq))
            seq += 1
            pending = []
    end = stamp(turns[-1]) if turns else SYNTHETIC_EPOCH
    for asked, probe in timed[pi:]:
        steps.append(Step("probe", now=max(asked, end), probe=probe))
    for probe in untimed:
        steps.append(Step("probe", now=end, probe=probe))
    return steps


def stamp(turn: Turn) -> datetime:
    """The clock time of a turn from ``clock_order`` (which dates every turn)."""
    if turn.timestamp is None:
        raise ValueError(f"turn {turn.id!r} has no timestamp; put turns through clock_order first")
    return turn.timestamp
