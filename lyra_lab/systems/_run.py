"""One memory system over one conversation on the replay clock: ingest, then query each probe in time.

The schedule is the replay engine's (``replay.plan``): turns in clock order and
each probe placed before the first turn at or after its ``asked_at``.  Before a
probe the session ingests the turns said since the last call, so the system sees
only what was said before the question; the batch holding the conversation's
last turn is ingested with ``final=True``.  Each query is timed (wall seconds of
the ``query`` call alone).  The turns after the last probe are ingested too
(``rest=True``, the default), so the ingest cost covers the whole conversation,
as a pipeline's replay does.

This is independent of the experiment grid: the grid's cell calls it and turns
``SystemRun`` into rows.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

from lyra_lab.backends import Backend, Embedder
from lyra_lab.corpus import Conversation, Probe, Turn
from lyra_lab.replay import SessionEnd, plan
from lyra_lab.systems._types import IngestReport, MemorySystem, SystemHit


@dataclass(frozen=True)
class SystemProbe:
    """One probe asked of a system.

    Attributes:
        probe: the probe.
        now: when it was asked on the replay clock.
        hits: what the system returned, best first.
        latency_s: wall seconds of the query call.
        turns_seen: turns ingested before it was asked.
    """

    probe: Probe
    now: datetime
    hits: tuple[SystemHit, ...]
    latency_s: float
    turns_seen: int


@dataclass(frozen=True)
class SystemRun:
    """A system's run over one conversation.

    Attributes:
        system: the system's label.
        conversation_id: the conversation.
        probes: one ``SystemProbe`` per probe, in the order given.
        ingest: the cost of every ingest call, added up.
        open_s, close_s: wall seconds to open (start processes, load) and close the session.
    """

    system: str
    conversation_id: str
    probes: tuple[SystemProbe, ...]
    ingest: IngestReport
    open_s: float
    close_s: float

    def query_latencies(self) -> tuple[float, ...]:
        return tuple(p.latency_s for p in self.probes)


def run_system(system: MemorySystem, conversation: Conversation, probes: Sequence[Probe], *, k: int = 10,
               backend: Backend | None = None, embedder: Embedder | None = None, rest: bool = True) -> SystemRun:
    """Open a fresh session of ``system``, feed ``conversation`` on its clock, ask ``probes``, close.

    Args:
        system: the memory system.
        conversation: its turns are ingested in clock order (``replay.clock_order``).
        probes: probes of this conversation; each is asked at its ``asked_at`` (or after the last turn).
        k: results per query.
        backend, embedder: the cell's, for systems that need them (``system.needs()``).
        rest: also ingest the turns after the last probe.

    Raises:
        MemorySystemError: the system failed (the session is closed and its processes are gone).
        ValueError: a probe of another conversation, or ``k < 1``.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    foreign = [p.id for p in probes if p.conversation_id != conversation.id]
    if foreign:
        raise ValueError(f"probes {foreign[:3]} belong to another conversation than {conversation.id!r}")
    steps = plan(conversation, probes, SessionEnd())
    total = sum(1 for s in steps if s.kind == "turn")
    label = system.label()
    start = time.perf_counter()
    session = system.open(conversation.id, backend, embedder)
    open_s = time.perf_counter() - start
    asked: dict[str, SystemProbe] = {}
    ingest = IngestReport()
    seen = 0
    with session:
        pending: list[Turn] = []
        for step in steps:
            if step.kind == "turn":
                pending.append(step.turn)  # type: ignore[arg-type]
            elif step.kind == "probe":
                probe: Probe = step.probe  # type: ignore[assignment]
                if pending:
                    seen += len(pending)
                    ingest = ingest + session.ingest(pending, final=seen == total)
                    pending = []
                began = time.perf_counter()
                hits = tuple(session.query(probe.question, k, now=step.now))
                asked[probe.id] = SystemProbe(probe, step.now, hits, time.perf_counter() - began, seen)
        if pending and rest:
            ingest = ingest + session.ingest(pending, final=True)
        closing = time.perf_counter()
    close_s = time.perf_counter() - closing
    return SystemRun(label, conversation.id, tuple(asked[p.id] for p in probes), ingest, open_s, close_s)
