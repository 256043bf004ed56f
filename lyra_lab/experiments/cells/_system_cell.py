"""A cell whose pipeline is a memory system lyra-lab does not build (``[grid] systems``): the same rows.

``run_cell`` hands a system cell here.  The system runs over the conversation on the replay
clock (``systems.SystemReplay``: before each probe it ingests what was said since the last
one), and each probe is scored as it is asked, from a ``replay.ProbeOutcome`` (``_system_recall``),
by ``measures.score_recall``: the metric names of every lyra-lab pipeline, per probe —
turn-level retrieval where the system traces hits to turns (``MemorySystem.traces()``; for one
that cannot, those measures are absent, never 0, and the row column ``traces_turns`` is false),
``answer_in_context@Btok`` at the run's budgets, ``retention`` where it can list its memory,
``recall_latency_s`` (one query, timed) — then answered and judged by the same ``AnswerStage``.

Conversation rows say what the memory cost to build (``ingest.*``: turns, items stored, LLM
calls, tokens, dollars, cached calls, failed calls, replies that were not the JSON asked for,
embedding requests, seconds and seconds per turn), ``open_s``/``close_s`` (starting and stopping
the system), the memory's size at the end where it can be listed, and the answer/judge phases.

A store the system refuses outright (an MCP tool error; for mem0, an LLM request the provider refused: HTTP
400, a prompt over the model's context) would be refused again: it is counted as ``failed.ingest.refused``
(in ``degraded`` too), not as ``degraded.ingest.failed``, so a plain resume keeps a cell whose only losses
are such refusals (``forecast._work``), and ``--retry-failed`` runs it again.

A system that crashes, hangs or answers garbage raises ``MemorySystemError`` (one line naming the
system and the call): the cell fails, the run goes on (``CELL_FAILURES``).  The session is closed
on every way out, Ctrl-C included, and so is every process it started; in a worker process that
the runner stops with SIGTERM too.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import weakref
from dataclasses import dataclass
from typing import Iterator, Mapping, Protocol

from lyra_lab._degradation import DegradationTally
from lyra_lab.backends import Backend, Embedder
from lyra_lab.corpus import Corpus
from lyra_lab.experiments.cells._answer import AnswerStage, Judge
from lyra_lab.experiments.cells._answered_rows import ProbeAnswers, add_answered_rows
from lyra_lab.experiments.cells._run import CellLog, answers_per_recaller
from lyra_lab.experiments.cells._cell import Cell, add_conversation_rows, phase_metrics
from lyra_lab.experiments.cells._detail import probe_record
from lyra_lab.experiments.cells._setup import CellSetup
from lyra_lab.experiments.grid import SystemPipeline
from lyra_lab.experiments.cells._system_recall import SystemMemory, context_counter, system_outcome
from lyra_lab.measures import ControlPool, evidence_in_context, score_recall, session_map
from lyra_lab.replay import EventLog, ProbeOutcome
from lyra_lab.runs import DETAIL_EVENT, CellRows
from lyra_lab.systems import IngestReport, MemorySystem, SystemReplay


class CellBackend(Backend, Protocol):
    """The cell's backend as ``run_cell`` wraps it: it also says whether an answer it passed on was simulated."""

    @property
    def simulated(self) -> bool: ...


class AnswerModels(Protocol):
    """The answering model and the judges of a cell (``_run``'s, built once per cell)."""

    @property
    def answerer(self) -> CellBackend: ...

    @property
    def judges(self) -> tuple[Judge, ...]: ...

    def simulated(self) -> bool: ...


@dataclass(frozen=True)
class SystemCellJob:
    """What a system cell runs with: the run's cell setup, the cell, its system pipeline, and what the cell built."""

    setup: CellSetup
    cell: Cell
    pipeline: SystemPipeline
    corpus: Corpus
    log: EventLog
    backend: CellBackend
    embedder: Embedder | None
    answers: AnswerModels | None


# notices said per run log (a cell's log wraps the run's): each system's ``notice()`` goes in once
_SAID: "weakref.WeakKeyDictionary[object, set[str]]" = weakref.WeakKeyDictionary()
_SAID_LOCK = threading.Lock()


def _say_once(log: EventLog, system: MemorySystem) -> None:
    """A ``system_notice`` event with the system's ``notice()`` (unless empty), once per run log.

    Cells in worker processes (``executor = "processes"``, Ray) each log through their own, so there it
    is once per worker.
    """
    text = system.notice()
    if not text:
        return
    run_log = log.run_log if isinstance(log, CellLog) else log
    with _SAID_LOCK:
        said = _SAID.setdefault(run_log, set())
        if text in said:
            return
        said.add(text)
    log.event("system_notice", notice=text)


@dataclass(frozen=True)
class _Scored:
    outcome: ProbeOutcome
    metrics: Mapping[str, float]


def run_system_cell(job: SystemCellJob) -> CellRows:
    """The tidy rows of a system cell (see the module docstring); ``MemorySystemError`` fails the cell."""
    setup, cell, pipeline, log = job.setup, job.cell, job.pipeline, job.log
    conv = job.corpus.conversation(cell.conversation_id)
    probes = list(job.corpus.probes_for(conv.id))
    system = pipeline.system
    needs = system.needs()
    log.event("cell_started", pipeline=cell.label, system=system.label(), backend=cell.backend_label,
              embedder=cell.embedder_label, seed=cell.seed, conversation_id=conv.id, probes=len(probes),
              answers=answers_per_recaller(setup, len(probes)) if job.answers is not None else 0,
              spec=pipeline.to_dict())
    _say_once(log, system)
    count = context_counter(pipeline.tokenizer)
    session_of = session_map(conv.turns())
    replay = SystemReplay(system, conv, probes, k=setup.scoring.k, backend=job.backend if needs.backend else None,
                          embedder=job.embedder if needs.embedder else None)
    memory = SystemMemory(replay, cell.label, session_of, count)
    replay.at_end = memory.sync  # the memory's size once every turn is in
    scored: list[_Scored] = []
    with _stopped_by_sigterm():
        for asked in replay:
            outcome = system_outcome(asked, memory, setup.scoring.k, pipeline.context_budget, count)
            read = outcome if system.traces() else outcome.untraced()
            scored.append(_Scored(outcome, score_recall(read, setup.scoring, session_of)))
            log.event("recall", conversation_id=conv.id, probe_id=asked.probe.id, recaller="", now=asked.now,
                      latency_s=round(asked.latency_s, 6), context_tokens=outcome.context_tokens,
                      hits=[[h.entry.id, round(float(h.score), 6)] for h in outcome.hits])
    run = replay.result
    log.event("ingest_report", conversation_id=conv.id, system=system.label(), **_report_fields(run.ingest))
    stage = None if job.answers is None or setup.answering is None else \
        AnswerStage(setup.answering, job.answers.answerer, job.answers.judges, log,
                    ControlPool.from_texts((t.text for t in conv.turns()), (p.answer for p in probes)))
    limit = 0 if setup.answering is None else min(len(scored), setup.answering.max_probes or len(scored))
    rows = CellRows()
    base = system_columns(setup.run, cell, pipeline, setup.corpus)
    for i, item in enumerate(scored):
        probe = item.outcome.probe
        answers = stage.answer_all(probe, item.outcome.context, "", cell.seed) if stage is not None and i < limit else ()
        read = item.outcome if system.traces() else item.outcome.untraced()
        add_answered_rows(rows, base, probe, item.metrics,
                          ProbeAnswers(answers, setup.answering, evidence_in_context(read) if answers else {}))
        log.event(DETAIL_EVENT, **probe_record(item.outcome, "", answers))
    degraded = _degraded(run.ingest, stage)
    refused = run.ingest.refused_calls  # would be refused again: failed for good, not healed by a resume
    add_conversation_rows(rows, base, {**_conversation_metrics(run.ingest, run.open_s, run.close_s, memory, stage),
                                       **degraded.metrics(), **({"failed.ingest.refused": refused} if refused else {})})
    rows.set_column("degraded", degraded.total + refused)
    rows.set_column("simulated", job.backend.simulated or (job.answers is not None and job.answers.simulated()))
    if setup.answering is not None:  # QA figures scored under different rules must never mix silently
        rows.set_column("qa.scorer", setup.answering.scorer)
    return rows


def system_columns(run: str, cell: Cell, pipeline: SystemPipeline, corpus: str) -> dict[str, object]:
    """The identifying columns of every row of a system cell (the strategy columns of a pipeline are empty)."""
    return {"run": run, "cell_id": cell.cell_id, "pipeline": cell.label, "chunker": "", "summarizer": "",
            "rollup": "", "trigger": "", "recaller": "", "backend": cell.backend_label,
            "embedder": cell.embedder_label, "seed": cell.seed, "corpus": corpus,
            "conversation_id": cell.conversation_id, "simulated": False, **pipeline.params()}


def ingest_metrics(report: IngestReport) -> dict[str, float]:
    """``ingest.<name>`` figures of a conversation's ingest (see the module docstring)."""
    usage = report.usage
    return {"ingest.turns": float(report.turns), "ingest.items": float(report.items),
            "ingest.calls": float(usage.calls), "ingest.prompt_tokens": float(usage.prompt_tokens),
            "ingest.completion_tokens": float(usage.completion_tokens), "ingest.cost_usd": float(usage.cost_usd),
            "ingest.cached_calls": float(usage.cached_calls), "ingest.failed_calls": float(report.failed_calls),
            "ingest.bad_outputs": float(report.bad_outputs), "ingest.embed_calls": float(report.embed_calls),
            "ingest.latency_s": float(report.seconds),
            "ingest.s_per_turn": float(report.seconds / report.turns) if report.turns else 0.0}


def _conversation_metrics(ingest: IngestReport, open_s: float, close_s: float, memory: SystemMemory,
                          stage: AnswerStage | None) -> dict[str, float]:
    metrics = {**ingest_metrics(ingest), "open_s": float(open_s), "close_s": float(close_s)}
    if memory.listed:
        metrics.update(memory_entries=float(len(memory.store)), memory_tokens=float(memory.tally.memory_tokens()))
    if stage is not None:
        metrics.update(phase_metrics(stage.meter.phases(stage.phases())))
        metrics["cached_calls"] = float(stage.meter.cached_calls)
    return metrics


def _degraded(ingest: IngestReport, stage: AnswerStage | None) -> DegradationTally:
    """What a system cell lost: ingest calls that failed (but were not refused outright), failed answering and judging calls."""
    lost = DegradationTally({("ingest", "failed"): ingest.failed_calls - ingest.refused_calls})
    return lost + stage.degradation_tally() if stage is not None else lost


def _report_fields(report: IngestReport) -> dict[str, object]:
    usage = report.usage
    return {"turns": report.turns, "items": report.items, "calls": usage.calls, "failed_calls": report.failed_calls,
            "refused_calls": report.refused_calls,
            "bad_outputs": report.bad_outputs, "embed_calls": report.embed_calls,
            "seconds": round(report.seconds, 6), "notes": list(report.notes)}


class _Terminated(SystemExit):
    """SIGTERM while a system cell runs: leave through every ``with`` (the session closes its processes)."""


@contextlib.contextmanager
def _stopped_by_sigterm() -> Iterator[None]:
    """Turn SIGTERM into an exception for the time of the cell, so the session closes before the process ends.

    Only in the main thread with SIGTERM's default action (a worker process the runner may terminate).
    """
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise _Terminated(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
