"""Replay one conversation through a memory pipeline and ask its probes on the way.

The engine walks the schedule from ``_plan``: turns enter memory as they
arrive, each trigger flush chunks and summarizes the pending turns and then
runs the rollup with ``now`` = the flush's time on the replay clock, and each
probe is answered by every recaller from the memory as it stood at the probe's
``asked_at``.  ``replay_iter`` yields each probe's outcomes at that moment, so whatever
reads an outcome's ranking deeper than its hits (the measures) does so while the memory
is as the probe found it; ``replay`` runs it to the end and keeps the outcomes.

Threads: the memory store is written only by the calling (owner) thread.
Summaries depend only on their window's turns, never on memory, so the windows
are summarized in worker threads ahead of the owner thread (``workers``); the
owner thread writes each summary back in schedule order, so the result does
not depend on ``workers``.  Rollups run on the owner thread because they read
and write the store.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping, Protocol, Sequence

from lyra_lab._degradation import DegradationTally
from lyra_lab._params import strategy_name
from lyra_lab.backends import AttemptTally, Backend, Embedder, token_counter
from lyra_lab.corpus import Conversation, Probe
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import Recaller
from lyra_lab.replay._ask import Asker, ContextRender, ContextRoom, MemoryTally, line_memo
from lyra_lab.replay._flush import Flusher, Window, progress_sink, spawn, summarize_window
from lyra_lab.replay._meter import PhaseMeter
from lyra_lab.replay._pipeline import Pipeline
from lyra_lab.replay._plan import plan
from lyra_lab.replay._types import PhaseCost, ProbeOutcome

logger = logging.getLogger(__name__)
PHASES = ("summarize", "rollup")
OnEvent = Callable[[str, Mapping[str, object]], None]


class EventLog(Protocol):
    """Where replay events go (a run log, or a cell's view of one)."""

    def event(self, event: str, /, **fields: object) -> None:
        """Record one event."""
        ...


@dataclass(frozen=True)
class ReplaySetup:
    """How a replay runs: the models, the recallers asked each probe, and where its events go.

    Attributes:
        backend: the LLM the summarizer and the rollup call.
        embedder: for recallers that embed (None: only those that do not).
        recallers: label → recaller, all asked every probe from the same memory.
        k: hits of each timed recall.
        workers: windows summarized concurrently ahead of the owner thread.
        log: a run log (``lyra_lab.runs.RunLog``) or anything with ``event(kind, **fields)``.
        on_event: progress callback ``(kind, fields)``; an exception in it is logged once and
            ignored, never breaks the replay.  It also gets the summarizer's progress as
            ``summarize_progress`` events (``flush``, ``stage``, ``i``, ``n``, ``ok``,
            ``duration_s``, ``detail``), which arrive from the worker thread summarizing that window.
        room: the context budget of the recallers that declare ``whole_memory()`` (``full_context``):
            the room the answerer's window leaves per probe (``measures.AnswerRoom``); None: the
            pipeline's ``context_budget``, as every other recaller's.
    """

    backend: Backend
    embedder: Embedder | None = None
    recallers: Mapping[str, Recaller] = field(default_factory=dict)
    k: int = 10
    workers: int = 1
    log: EventLog | None = None
    on_event: OnEvent | None = None
    room: ContextRoom | None = None

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers}")
        if self.k < 1:
            raise ValueError(f"k must be >= 1, got {self.k}")


@dataclass(frozen=True)
class ReplayResult:
    """What one replay produced.

    Attributes:
        outcomes: recaller label → one ``ProbeOutcome`` per probe, in input order (their
            rankings can no longer be read: the memory has moved on).
        phases: ``summarize`` and ``rollup`` costs of building the memory (shared by every recaller).
        recall_phases: recaller label → its ``embed`` phase (embedding time is also inside each
            probe's ``recall_latency_s``).
        flushes: how many times the trigger fired (including the final flush).
        memory_entries, memory_tokens: size of the memory at the end.
        cached_calls: LLM calls served from a response cache.
        degraded: every fallback the summarizer, the flush and the rollup took, per ``(stage, kind)``
            (empty: the memory is the one the strategies meant to build).
        attempts: phase → how many attempts its LLM calls needed, and the calls that failed for good.
        store: the final memory (for inspection in notebooks).
    """

    conversation_id: str
    outcomes: Mapping[str, tuple[ProbeOutcome, ...]]
    phases: Mapping[str, PhaseCost]
    recall_phases: Mapping[str, Mapping[str, PhaseCost]]
    flushes: int
    memory_entries: int
    memory_tokens: int
    cached_calls: int
    degraded: DegradationTally = field(default_factory=DegradationTally)
    attempts: Mapping[str, AttemptTally] = field(default_factory=dict)
    store: MemoryStore = field(repr=False, compare=False, hash=False, default_factory=MemoryStore)


class ReplayRun:
    """One replay in progress: iterate it for each probe's outcomes, then read ``result``.

    Iterating yields, probe by probe in replay order, the outcomes of every recaller (a list),
    at the moment the probe is asked: the store does not change until the next item is asked for.
    """

    def __init__(self, conversation: Conversation, probes: Sequence[Probe], pipeline: Pipeline, setup: ReplaySetup):
        foreign = [p.id for p in probes if p.conversation_id != conversation.id]
        if foreign:
            raise ValueError(f"probes {foreign[:3]} belong to another conversation than {conversation.id!r}")
        self.conversation, self.probes, self.pipeline, self.setup = conversation, list(probes), pipeline, setup
        self.store = MemoryStore()
        self.meter = PhaseMeter(self.emit)
        self._sink_failures = 0
        self._result: ReplayResult | None = None
        self._steps: Iterator[list[ProbeOutcome]] | None = None

    def emit(self, event: str, /, **fields: object) -> None:
        """Send one event to the log and the progress callback (which may fail: it is ignored)."""
        if self.setup.log is not None:
            self.setup.log.event(event, conversation_id=self.conversation.id, **fields)
        if self.setup.on_event is not None:
            try:
                self.setup.on_event(event, fields)
            except Exception:  # noqa: BLE001 - a failing progress sink never breaks the work
                self._sink_failures += 1
                if self._sink_failures == 1:  # once per replay, not once per event
                    logger.warning("on_event callback failed (on %s); ignoring it", event, exc_info=True)

    @property
    def result(self) -> ReplayResult:
        """The replay's result (after iterating it to the end)."""
        if self._result is None:
            raise RuntimeError("the replay has not finished: iterate it to the end first")
        return self._result

    def __iter__(self) -> Iterator[list[ProbeOutcome]]:
        """The probes' outcomes in replay order (one replay: iterating again goes on where it stopped)."""
        if self._steps is None:
            self._steps = self._run()
        return self._steps

    def _run(self) -> Iterator[list[ProbeOutcome]]:
        setup, pipeline, conv = self.setup, self.pipeline, self.conversation
        count = line_memo(token_counter(pipeline.tokenizer))
        render = ContextRender(pipeline.context_budget, count, setup.room)
        tally = MemoryTally(self.store, conv.id, count)
        session_of = {turn.id: turn.session_id for turn in conv.turns()}
        asker = Asker(self.store, conv.id, setup.recallers, setup.embedder, setup.k)
        steps = plan(conv, self.probes, pipeline.trigger)
        flusher = Flusher(self.store, conv.id, pipeline, setup.backend, count, self.meter, self.emit)
        flushes = [s for s in steps if s.kind == "flush"]
        outcomes: dict[str, dict[str, ProbeOutcome]] = {label: {} for label in setup.recallers}
        futures: dict[int, Future[Window]] = {}
        submitted = 0
        for step in steps:
            # Keep up to ``workers`` windows summarizing ahead of the owner thread.
            while submitted < len(flushes) and len(futures) < setup.workers:
                f = flushes[submitted]
                futures[f.seq] = spawn(summarize_window, conv.id, pipeline, f, setup.backend,
                                       progress_sink(self.emit, f.seq))
                submitted += 1
            if step.turn is not None:
                self.store.add(MemoryEntry.from_turn(step.turn))
            elif step.kind == "flush":
                flusher.flush(step, futures.pop(step.seq).result())
            elif step.probe is not None:
                tally.sync()
                asked = asker.ask(step.probe, step.now, tally.state(step.probe, session_of), render)
                for outcome in asked:
                    outcomes[outcome.recaller][step.probe.id] = outcome
                    self.emit("recall", probe_id=step.probe.id, recaller=outcome.recaller, now=step.now,
                              latency_s=round(outcome.recall_latency_s, 6), context_tokens=outcome.context_tokens,
                              hits=[[h.entry.id, round(float(h.score), 6)] for h in outcome.hits])
                yield asked
        tally.sync()
        self._result = ReplayResult(
            conversation_id=conv.id,
            outcomes={label: tuple(by_id[p.id] for p in self.probes) for label, by_id in outcomes.items()},
            phases=self.meter.phases(PHASES),
            recall_phases={label: m.phases(("embed",)) for label, m in asker.meters.items()},
            flushes=len(flushes), memory_entries=len(self.store.entries(conv.id)),
            memory_tokens=tally.memory_tokens(), cached_calls=self.meter.cached_calls,
            degraded=self.meter.degradation_tally(),
            attempts={phase: self.meter.attempt_tally(phase) for phase in PHASES}, store=self.store)


def by_name(recallers: Sequence[Recaller]) -> dict[str, Recaller]:
    """``{registered name: recaller}`` of ``recallers`` (for ``ReplaySetup.recallers``)."""
    return {strategy_name(r): r for r in recallers}


def replay_iter(conversation: Conversation, probes: Sequence[Probe], pipeline: Pipeline,
                setup: ReplaySetup) -> ReplayRun:
    """Replay ``conversation`` through ``pipeline``; iterating the run yields each probe's outcomes as asked."""
    return ReplayRun(conversation, probes, pipeline, setup)


def replay(conversation: Conversation, probes: Sequence[Probe], pipeline: Pipeline, setup: ReplaySetup) -> ReplayResult:
    """Replay ``conversation`` through ``pipeline`` to the end and ask ``probes`` with every recaller.

    The outcomes' rankings cannot be read afterwards (the memory has moved on); score them
    while iterating ``replay_iter`` instead.
    """
    run = replay_iter(conversation, probes, pipeline, setup)
    for _ in run:
        pass
    return run.result
