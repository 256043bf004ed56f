"""Where planted evidence sessions may go: moments inside the gaps between a user's real sessions.

A real session spans its first to its last timestamp.  Every gap between two
consecutive real sessions that is long enough holds up to ``PER_GAP`` planted
sessions, each in its own equal share of the gap with a margin either side, so
a planted session never overlaps a real one or another planted one.  A few
moments in the week after the last real session serve only when the gaps run
out (a short export).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from lyra_lab.corpus import Conversation

SESSION_ROOM = timedelta(hours=1)  # a planted session lasts well under this
MARGIN = timedelta(minutes=30)
PER_GAP = 3
TRAILING_DAYS = 7


@dataclass(frozen=True)
class Moment:
    """A start time for one planted session; ``trailing`` when it lies after the last real session."""

    at: datetime
    trailing: bool = False


def session_spans(conv: Conversation) -> list[tuple[datetime, datetime]]:
    """(first, last) timestamp of each real session that has any, in time order."""
    spans = []
    for session in conv.sessions:
        stamps = [t.timestamp for t in session.turns if t.timestamp is not None]
        if stamps:
            spans.append((min(stamps), max(stamps)))
    return sorted(spans)


def free_moments(rng: random.Random, conv: Conversation) -> list[Moment]:
    """Candidate start times for planted sessions, at the hours real sessions start wherever that fits."""
    spans = session_spans(conv)
    hours = [start.hour for start, _ in spans]  # the user's own chatting hours
    moments: list[Moment] = []
    latest = spans[0][1]
    for start, end in spans[1:]:
        gap_start = latest
        width = start - gap_start
        share_count = min(PER_GAP, int(width / (SESSION_ROOM + 2 * MARGIN)))
        if share_count >= 1:
            share = width / share_count
            for i in range(share_count):
                lo = gap_start + i * share + MARGIN
                room = share - 2 * MARGIN - SESSION_ROOM
                at = lo + timedelta(seconds=rng.uniform(0, room.total_seconds()))
                usual = at.replace(hour=rng.choice(hours), minute=rng.randint(0, 59))
                moments.append(Moment(usual if lo <= usual <= lo + room else at))
        latest = max(latest, end)
    for day in range(1, TRAILING_DAYS + 1):
        at = latest + timedelta(days=day)
        moments.append(Moment(at.replace(hour=rng.choice(hours), minute=rng.randint(0, 59)), trailing=True))
    return moments


class Moments:
    """The free moments of one conversation; ``take`` and ``take_pair`` use them up."""

    def __init__(self, moments: list[Moment]):
        self.free = list(moments)

    def _pool(self, trailing: bool) -> list[Moment]:
        return [m for m in self.free if trailing or not m.trailing]

    def take(self, rng: random.Random) -> datetime | None:
        """A random free moment, preferring the gaps between real sessions; None when none is left."""
        for trailing in (False, True):
            pool = self._pool(trailing)
            if pool:
                moment = rng.choice(pool)
                self.free.remove(moment)
                return moment.at
        return None

    def take_pair(self, rng: random.Random, min_gap: timedelta) -> tuple[datetime, datetime] | None:
        """Two free moments at least ``min_gap`` apart (earlier first), or None."""
        for trailing in (False, True):
            pool = self._pool(trailing)
            firsts = [m for m in pool if any(o.at - m.at >= min_gap for o in pool)]
            if firsts:
                first = rng.choice(firsts)
                second = rng.choice([o for o in pool if o.at - first.at >= min_gap])
                self.free.remove(first)
                self.free.remove(second)
                return first.at, second.at
        return None
