"""Replay one conversation through a memory pipeline and ask its probes on the way.

The engine walks the schedule from ``_plan``: turns enter memory as they
arrive, each trigger flush chunks and summarizes the pending turns and then
runs the rollup with ``now`` = the flush's time on the replay clock, and each
probe is answered by every recaller from the memory as it stood at the probe's
``asked_at``.

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
from typing import Any, Callable, Mapping, Sequence

from lyra_lab.backends import Backend, Embedder
from lyra_lab.corpus import Conversation, Probe
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.replay._flush import Window, progress_sink, run_rollup, spawn, summarize_window, write_window
from lyra_lab.replay._meter import PhaseMeter
from lyra_lab.replay._pipeline import Pipeline, _name
from lyra_lab.replay._plan import plan
from lyra_lab.replay._probe import BUDGET_DEPTH, ProbeAsker
from lyra_lab.replay._types import PhaseCost, ProbeOutcome

logger = logging.getLogger(__name__)
PHASES = ("summarize", "rollup")
OnEvent = Callable[[str, Mapping[str, Any]], None]


@dataclass(frozen=True)
class ReplayResult:
    """What one replay produced.

    Attributes:
        outcomes: recaller label → one ``ProbeOutcome`` per probe, in input order.
        phases: ``summarize`` and ``rollup`` costs of building the memory (shared
            by every recaller).
        recall_phases: recaller label → its ``embed`` phase (embedding time is
            also inside each probe's ``recall_latency_s``).
        flushes: how many times the trigger fired (including the final flush).
        memory_entries, memory_tokens: size of the memory at the end.
        cached_calls: LLM calls served from a response cache.
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
    store: MemoryStore = field(repr=False, compare=False, hash=False, default_factory=MemoryStore)


def replay(
    conversation: Conversation,
    probes: Sequence[Probe],
    pipeline: Pipeline,
    *,
    backend: Backend,
    embedder: Embedder | None = None,
    recallers: Mapping[str, Any] | Sequence[Any] = (),
    k: int = 10,
    log: Any = None,
    on_event: OnEvent | None = None,
    workers: int = 1,
    depth: int | None = None,
) -> ReplayResult:
    """Replay ``conversation`` through ``pipeline`` and ask ``probes`` with every recaller.

    Args:
        conversation: the conversation (turns are fed in timestamp order).
        probes: probes of this conversation; each is asked at its ``asked_at``.
        pipeline: the memory pipeline.
        backend: the LLM used by the summarizer and the rollup.
        embedder: for dense recallers.
        recallers: label → recaller (a sequence is labelled by registered names).
        k: hits per recall.
        log: a run log (``RunLog``) or anything with ``event(kind, **fields)``.
        on_event: progress callback ``(kind, fields)``; an exception in it is
            logged and ignored, never breaks the replay.  It also gets the
            summarizer's progress as ``summarize_progress`` events (``flush``,
            ``stage``, ``i``, ``n``, ``ok``, ``duration_s``, ``detail``), which
            arrive from the worker thread summarizing that window.
        workers: windows summarized concurrently ahead of the owner thread.
        depth: how deep each probe's ranking (``ProbeOutcome.ranking``) goes, for
            scoring context budgets; ``None``: ``BUDGET_DEPTH`` (100). Pass ``k`` when
            no budget is scored, so each recall runs once, not twice.
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if not isinstance(recallers, Mapping):
        recallers = {_name(r): r for r in recallers}
    foreign = [p.id for p in probes if p.conversation_id != conversation.id]
    if foreign:
        raise ValueError(f"probes {foreign[:3]} belong to another conversation than {conversation.id!r}")

    sink_failures = [0]

    def emit(event: str, /, **fields: Any) -> None:
        if log is not None:
            log.event(event, conversation_id=conversation.id, **fields)
        if on_event is not None:
            try:
                on_event(event, fields)
            except Exception:  # noqa: BLE001 - a failing progress sink never breaks the work
                sink_failures[0] += 1
                if sink_failures[0] == 1:  # once per replay, not once per event
                    logger.warning("on_event callback failed (on %s); ignoring it", event, exc_info=True)

    from lyra_lab.backends import token_counter

    count = token_counter(pipeline.tokenizer)
    meter = PhaseMeter(emit)
    store = MemoryStore()
    asker = ProbeAsker(store, conversation.id, pipeline, recallers, embedder, k, count, emit,
                       depth=BUDGET_DEPTH if depth is None else depth)
    steps = plan(conversation, probes, pipeline.trigger)
    flushes = [s for s in steps if s.kind == "flush"]
    outcomes: dict[str, dict[str, ProbeOutcome]] = {label: {} for label in recallers}

    futures: dict[int, Future[Window]] = {}
    submitted = 0
    for step in steps:
        # Keep up to ``workers`` windows summarizing ahead of the owner thread.
        while submitted < len(flushes) and len(futures) < workers:
            f = flushes[submitted]
            futures[f.seq] = spawn(summarize_window, conversation.id, pipeline, f, backend, progress_sink(emit, f.seq))
            submitted += 1
        if step.kind == "turn":
            store.add(MemoryEntry.from_turn(step.turn))  # type: ignore[arg-type]
        elif step.kind == "flush":
            window = futures.pop(step.seq).result()
            write_window(store, pipeline, step, window, meter, emit)
            run_rollup(store, conversation.id, pipeline, step, backend, count, meter, emit)
        else:
            probe: Probe = step.probe  # type: ignore[assignment]
            for label, outcome in asker.ask(probe, step.now).items():
                outcomes[label][probe.id] = outcome

    entries = store.entries(conversation.id)
    memory_tokens = asker.memory_snapshot()[2]
    return ReplayResult(
        conversation_id=conversation.id,
        outcomes={label: tuple(by_id[p.id] for p in probes) for label, by_id in outcomes.items()},
        phases=meter.phases(PHASES),
        recall_phases={label: m.phases(("embed",)) for label, m in asker.meters.items()},
        flushes=len(flushes),
        memory_entries=len(entries),
        memory_tokens=memory_tokens,
        cached_calls=meter.cached_calls,
        store=store,
    )


