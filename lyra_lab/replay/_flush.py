"""What happens at a trigger flush: chunk and summarize a window (worker thread), write it back, roll up.

The worker side (``summarize_window``) touches no memory; the owner side
(a ``Flusher``: ``write_window``, then ``run_rollup``) is the only code that writes the store, and
counts every fallback the summarizer, the flush itself or the rollup took in
the replay's ``PhaseMeter`` (``degradation_tally``), each also a ``degraded``
event in the run log and a ``degraded`` list on ``summary_written`` /
``rollup_report``.

With raw turns kept and no summarizer, a chunk holding exactly one whole turn is that
raw turn again (``[date time] Speaker: text`` beside ``Speaker: text``): it is not
written, so each turn is in memory, and embedded, once (``same_as_raw`` on
``summary_written`` counts them).  Pieces of a long turn split over several chunks are
written: they reach text a truncating embedder never reads in the raw turn.
"""

from __future__ import annotations

import contextvars
import hashlib
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

from lyra_lab._degradation import Degradation
from lyra_lab.backends import Backend, Completion
from lyra_lab.memory import EntryKind, MemoryEntry, MemoryStore
from lyra_lab.replay._meter import EventSink, PhaseMeter
from lyra_lab.replay._pipeline import Pipeline
from lyra_lab.replay._plan import Step
from lyra_lab.rollup import CompactRequest

if TYPE_CHECKING:
    from lyra_lab.summarize import ProgressCallback, ProgressEvent


@dataclass(frozen=True)
class Window:
    """The memory entries one flush produced, with the calls, wall time and fallbacks it took."""

    entries: tuple[MemoryEntry, ...]
    calls: tuple[Completion, ...] = ()
    wall_s: float = 0.0
    detail: Mapping[str, Any] = field(default_factory=dict)
    degraded: tuple[Degradation, ...] = ()


def spawn(fn: Callable[..., Window], *args: object) -> Future[Window]:
    """Run ``fn`` in a daemon thread; its result or exception lands in the returned future.

    Daemon threads, not a ThreadPoolExecutor: the executor's workers are joined at
    interpreter exit, so Ctrl-C would wait for an in-flight LLM call (minutes on a
    slow backend).  At most ``workers`` of these run at once (the caller bounds it).  The thread runs
    in a copy of the caller's context, so progress and retries it reports reach the caller's sinks.
    """
    future: Future[Window] = Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to the owner thread, which re-raises it
            future.set_exception(exc)

    # The caller's context (its progress and retry sinks, lyra_lab.backends.report_progress) goes with the work.
    context = contextvars.copy_context()
    threading.Thread(target=context.run, args=(run,), name="lyra-summarize", daemon=True).start()
    return future


def summarize_window(conversation_id: str, pipeline: Pipeline, step: Step, backend: Backend,
                     on_event: Callable[[Any], None] | None = None) -> Window:
    """Chunk (and summarize) one window's turns; runs in a worker thread, touches no memory.

    ``on_event`` receives the summarizer's progress events (``ProgressEvent``), on this worker thread.
    """
    turns = step.turns
    start = time.perf_counter()
    chunks = pipeline.chunker.chunk(list(turns))
    ids = tuple(t.id for t in turns)
    key = hashlib.sha256("\x1f".join(ids).encode("utf-8")).hexdigest()[:10]
    if pipeline.summarizer is None:
        entries = tuple(
            MemoryEntry(id=f"chunk:{step.seq:05d}:{c.index}:{key}", conversation_id=conversation_id, kind=EntryKind.CHUNK,
                        text=c.text, turn_ids=tuple(c.turn_ids), session_ids=tuple(c.session_ids),
                        start=c.start, end=c.end, meta={"flush": step.seq})
            for c in chunks if c.text.strip())
        return Window(entries, (), time.perf_counter() - start, {"chunks": len(chunks)})
    summary = pipeline.summarizer.summarize(chunks, backend, on_event=on_event)
    wall = time.perf_counter() - start
    detail = {"chunks": len(chunks), "decision": summary.decision, "partial": summary.partial,
              "errors": list(summary.errors)}
    text = summary.text.strip()
    if not text:
        # An empty summary would be a memory entry that recalls nothing: keep the raw turns instead.
        empty = Degradation("flush", "raw_turns", f"flush {step.seq}", "empty",
                            f"{pipeline.kind_names()['summarizer']} returned an empty summary of {len(chunks)} chunk(s); "
                            "the window's raw turns stay in memory instead", turn_ids=ids)
        return Window((), tuple(summary.calls), wall, {**detail, "empty": True}, (*summary.degraded, empty))
    entry = MemoryEntry(
        id=f"summary:{step.seq:05d}:{key}", conversation_id=conversation_id, kind=EntryKind.SUMMARY, text=text,
        turn_ids=tuple(summary.turn_ids) or ids, session_ids=tuple(dict.fromkeys(t.session_id for t in turns)),
        start=turns[0].timestamp, end=turns[-1].timestamp, level=0,
        meta={"flush": step.seq, "decision": summary.decision, "partial": summary.partial})
    return Window((entry,), tuple(summary.calls), wall, detail, tuple(summary.degraded))


def progress_sink(emit: Callable[..., None], seq: int) -> ProgressCallback:
    """A summarizer progress callback that emits ``summarize_progress`` events of flush ``seq``."""

    def on_event(event: ProgressEvent) -> None:
        emit("summarize_progress", flush=seq, stage=event.stage, i=event.i, n=event.n, ok=event.ok,
             duration_s=None if event.duration_s is None else round(float(event.duration_s), 6),
             detail=dict(event.detail))

    return on_event


@dataclass(frozen=True)
class Flusher:
    """The owner side of one replay's (or live memory's) flushes: what every flush writes to and reports through.

    Attributes:
        store: the memory the flushes write (owner thread only).
        conversation_id: the conversation whose memory it is.
        pipeline: the chunker, summarizer, rollup, budgets and ``keep_raw`` the flushes follow.
        backend: the LLM the rollup calls.
        count: tokens of a text, as the rollup's budget measures them.
        meter: where each flush's calls, wall time and fallbacks are counted.
        emit: ``emit(event, **fields)``, the run log's events of each flush.
    """

    store: MemoryStore
    conversation_id: str
    pipeline: Pipeline
    backend: Backend
    count: Callable[[str], int]
    meter: PhaseMeter
    emit: EventSink

    def flush(self, step: Step, window: Window) -> None:
        """Write ``window`` (flush ``step``'s summary or chunks) back, then run the rollup."""
        self.write_window(step, window)
        self.run_rollup(step)

    def write_window(self, step: Step, window: Window) -> None:
        """Store ``window``'s entries (dropping the raw turns they cover unless ``keep_raw``) and count its cost."""
        store, pipeline, meter = self.store, self.pipeline, self.meter
        meter.completions("summarize", window.calls, flush=step.seq)
        meter.degradations("summarize", window.degraded, flush=step.seq)
        meter.wall("summarize", window.wall_s)
        remove: list[str] = []
        if not pipeline.keep_raw and window.entries:
            covered = {tid for e in window.entries for tid in e.turn_ids}
            remove = [f"turn:{tid}" for tid in dict.fromkeys(t.id for t in step.turns)
                      if tid in covered and f"turn:{tid}" in store]
        entries = window.entries
        if pipeline.keep_raw and pipeline.summarizer is None:  # a one-turn chunk is its raw turn again: not stored twice
            entries = tuple(e for e in entries if not _twin_of_raw(e, store))
        store.apply(add=entries, remove=remove)
        self.emit("summary_written", flush=step.seq, now=step.now, turns=len(step.turns),
                  entries=[e.id for e in entries], removed_raw=len(remove),
                  same_as_raw=len(window.entries) - len(entries), wall_s=round(window.wall_s, 6),
                  # what the model wrote (a preview), so a surprising score can be traced to its summary
                  summary=[e.text[:300] for e in window.entries if e.kind == EntryKind.SUMMARY],
                  degraded=[d.metric for d in window.degraded], **window.detail)

    def run_rollup(self, step: Step) -> None:
        """Compact the memory to the pipeline's budget at the flush's ``now`` (no rollup: nothing) and count it."""
        rollup, store, meter, emit = self.pipeline.rollup, self.store, self.meter, self.emit
        if rollup is None:
            return
        start = time.perf_counter()
        request = CompactRequest(budget=self.pipeline.budget, backend=self.backend, now=step.now, count=self.count)
        report = rollup.compact(store, self.conversation_id, request)
        meter.wall("rollup", time.perf_counter() - start)
        meter.completions("rollup", report.calls, flush=step.seq)
        meter.degradations("rollup", report.degraded, flush=step.seq)
        for digest_id in report.digests:
            if digest_id in store:
                d = store.get(digest_id)
                emit("digest_written", flush=step.seq, now=step.now, entry=d.id, kind=d.kind, level=d.level,
                     period=d.period, turns=len(d.turn_ids))
        emit("rollup_report", flush=step.seq, now=step.now, ran=report.ran, tokens_before=report.tokens_before,
             tokens_after=report.tokens_after, budget=report.budget, kept=len(report.kept),
             folded=len(report.folded), dropped=list(report.dropped), digests=list(report.digests),
             error=report.error, reason=report.reason, degraded=[d.metric for d in report.degraded])


def _twin_of_raw(entry: MemoryEntry, store: MemoryStore) -> bool:
    """A chunk holding all of one turn whose raw entry is in memory: the same text but for the time stamp.

    A piece of a long turn split over several chunks is not a twin (it is the only entry whose start is there).
    """
    raw_id = f"turn:{entry.turn_ids[0]}" if len(entry.turn_ids) == 1 else ""
    if entry.kind != EntryKind.CHUNK or raw_id not in store:
        return False
    text = entry.text.rstrip("\n")
    if text.startswith("["):  # render_turn's "[2023-05-08 13:56] " time stamp
        text = text.partition("] ")[2]
    return text == store.get(raw_id).text.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")
