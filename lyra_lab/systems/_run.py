"""One memory system over one conversation on the replay clock: ingest, then query each probe in time.

The schedule is the replay engine's (``replay.plan``): turns in clock order and
each probe placed before the first turn at or after its ``asked_at``.  Before a
probe the session ingests the turns said since the last call, so the system sees
only what was said before the question; the batch holding the conversation's
last turn is ingested with ``final=True``.  Each query is timed (wall seconds of
the ``query`` call alone).  The turns after the last probe are ingested too
(``rest=True``, the default), so the ingest cost covers the whole conversation,
as a pipeline's replay does.

``SystemReplay`` yields each probe as it is asked, while the session is open (the
experiment grid's system cell scores it then, reading deeper and the memory's
contents); ``run_system`` runs it to the end.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Iterator, Sequence, TypedDict, Unpack

from lyra_lab.backends import Backend, Embedder
from lyra_lab.corpus import Conversation, Probe, Turn
from lyra_lab.replay import SessionEnd, plan
from lyra_lab.systems._types import IngestReport, MemorySession, MemorySystem, SystemHit


class SystemRunOptions(TypedDict, total=False):
    """How a system is run over a conversation (the keyword options of ``run_system`` and ``SystemReplay``).

    Attributes:
        k: results per query (default 10).
        backend: the cell's backend, for systems that make LLM calls (``system.needs()``; default None).
        embedder: the cell's embedder, for systems that embed (default None).
        rest: also ingest the turns after the last probe (default true), so the ingest cost covers
            the whole conversation.
    """

    k: int
    backend: Backend | None
    embedder: Embedder | None
    rest: bool


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
        """Each probe's query latency (seconds), in probe order."""
        return tuple(p.latency_s for p in self.probes)


class SystemReplay:
    """One system over one conversation in progress: iterate it for each probe as asked, then read ``result``.

    Iterating yields each probe's ``SystemProbe`` while the session is open and its memory is as
    the probe found it: until the next item is asked for, ``session`` may be asked again (deeper,
    or for its ``contents``) and ``version`` (ingest calls so far) stays the same.  The session is
    closed when the iteration ends, fails or is abandoned (every process it started is gone).
    ``at_end``, when set, is called once the last turns are ingested, the session still open (a
    last look at the memory).

    Args: as ``run_system``'s.
    """

    def __init__(self, system: MemorySystem, conversation: Conversation, probes: Sequence[Probe],
                 **options: Unpack[SystemRunOptions]):
        k = options.get("k", 10)
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        foreign = [p.id for p in probes if p.conversation_id != conversation.id]
        if foreign:
            raise ValueError(f"probes {foreign[:3]} belong to another conversation than {conversation.id!r}")
        self.system, self.conversation, self.probes = system, conversation, list(probes)
        self.k, self.rest = k, options.get("rest", True)
        self.backend, self.embedder = options.get("backend"), options.get("embedder")
        self.session: MemorySession | None = None
        self.version = 0
        self.at_end: Callable[[], object] | None = None
        self._result: SystemRun | None = None
        self._steps: Iterator[SystemProbe] | None = None

    @property
    def result(self) -> SystemRun:
        """The run (after iterating to the end)."""
        if self._result is None:
            raise RuntimeError("the system's run has not finished: iterate it to the end first")
        return self._result

    def __iter__(self) -> Iterator[SystemProbe]:
        if self._steps is None:
            self._steps = self._run()
        return self._steps

    def _run(self) -> Iterator[SystemProbe]:
        conversation, probes = self.conversation, self.probes
        steps = plan(conversation, probes, SessionEnd())
        total = sum(1 for s in steps if s.kind == "turn")
        start = time.perf_counter()
        session = self.system.open(conversation.id, self.backend, self.embedder)
        open_s = time.perf_counter() - start
        asked: dict[str, SystemProbe] = {}
        ingest = IngestReport()
        seen = 0
        with session:
            self.session = session
            pending: list[Turn] = []
            for step in steps:
                if step.turn is not None:
                    pending.append(step.turn)
                elif step.probe is not None:
                    if pending:
                        seen += len(pending)
                        ingest = ingest + session.ingest(pending, final=seen == total)
                        self.version += 1
                        pending = []
                    began = time.perf_counter()
                    hits = tuple(session.query(step.probe.question, self.k, now=step.now))
                    asked[step.probe.id] = SystemProbe(step.probe, step.now, hits, time.perf_counter() - began, seen)
                    yield asked[step.probe.id]
            if pending and self.rest:
                ingest = ingest + session.ingest(pending, final=True)
                self.version += 1
            if self.at_end is not None:
                self.at_end()
            closing = time.perf_counter()
        self.session = None
        self._result = SystemRun(self.system.label(), conversation.id, tuple(asked[p.id] for p in probes), ingest,
                                 open_s, time.perf_counter() - closing)


def run_system(system: MemorySystem, conversation: Conversation, probes: Sequence[Probe],
               **options: Unpack[SystemRunOptions]) -> SystemRun:
    """Open a fresh session of ``system``, feed ``conversation`` on its clock, ask ``probes``, close.

    Args:
        system: the memory system.
        conversation: its turns are ingested in clock order (``replay.clock_order``).
        probes: probes of this conversation; each is asked at its ``asked_at`` (or after the last turn).
        **options: ``k``, ``backend``, ``embedder``, ``rest`` (``SystemRunOptions``).

    Raises:
        MemorySystemError: the system failed (the session is closed and its processes are gone).
        ValueError: a probe of another conversation, or ``k < 1``.
    """
    run = SystemReplay(system, conversation, probes, **options)
    for _ in run:
        pass
    return run.result
