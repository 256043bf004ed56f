"""One cell: replay a conversation through a memory pipeline, score each probe as it is asked, answer, make rows.

Three stages, in order:

1. **Replay and score.** ``replay_iter`` yields each probe's outcomes (every recaller's hits,
   context and deeper ranking) while the memory is as the probe found it, and
   ``measures.score_recall`` turns each into its retrieval, equal-budget and retention measures
   right then.
2. **Answer.** With answering on, the first ``max_probes`` probes of each recaller are answered
   from their rendered context and graded by every judge (``AnswerStage``).
3. **Rows.** One group of rows per probe × recaller (its measures, then a ``judge`` row per
   verdict) and one of conversation-level figures (phase costs, memory size) per recaller.

Degradation is data: the conversation-level rows carry a ``degraded.<stage>.<kind>`` count for
every fallback the replay took and every answering or judging call that failed for good
(``degraded.answer.failed``, ``degraded.judge.failed``), and every row of a cell × recaller has
the column ``degraded``: how many there were (0: its figures describe the memory the pipeline
meant to build, every probe answered and judged).  How many attempts the cell's calls needed goes
to the run log (a ``call_attempts`` event), for the run's summary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from lyra_lab._degradation import DegradationTally

from tqdm.auto import tqdm

from lyra_lab.backends import (AttemptTally, BackendSpec, BackendWrapper, CallsStopped, Completion, Message,
                               ProgressEvent, RetryEvent, report_progress, report_retries, stop_token)
from lyra_lab.corpus import Corpus
from lyra_lab.experiments.cells._answer import AnswerStage, Judge
from lyra_lab.experiments.cells._answered_rows import ProbeAnswers, add_answered_rows
from lyra_lab.experiments.cells._detail import probe_record
from lyra_lab.experiments.cells._cell import (Cell, add_conversation_rows, base_columns,
                                        phase_metrics)
from lyra_lab.experiments.cells._setup import CellSetup, answer_room
from lyra_lab.experiments.grid import Resources, SeededBackend
from lyra_lab.experiments.cells._failures import CELL_FAILURES, deterministic, failed_rows
from lyra_lab.measures import ControlPool, evidence_in_context, score_recall, session_map
from lyra_lab.replay import EventLog, Pipeline, ProbeOutcome, ReplayResult, ReplaySetup, plan, replay_iter
from lyra_lab.runs import DETAIL_EVENT, CellRows


class CellLog:
    """The run log as one cell sees it: every event carries the cell id.

    Once the cell's run has stopped (its ``StopToken``, carried by the thread that makes the log), the
    cell stops too: an event it would write, to a log the run is closing, raises ``CallsStopped`` instead.
    """

    def __init__(self, log: EventLog, cell_id: str):
        self.run_log = log
        self.cell_id = cell_id
        self._stop = stop_token()

    def event(self, event: str, /, **fields: object) -> None:
        """Record ``event`` with the cell's id."""
        if self._stop is not None and self._stop.stopped:
            raise CallsStopped(f"cell {self.cell_id}: the run was stopped; {event!r} not written")
        self.run_log.event(event, cell_id=self.cell_id, **fields)


class RetryReporting(BackendWrapper):
    """A backend wrapper that sends every retry of its calls to the cell's run log (``retry`` events).

    The sink is set around each call in the calling thread (the summarizers call from their own threads),
    so a retry is attributed to the cell that made the call even while other cells share the backend.
    """

    inner: SeededBackend

    def __init__(self, inner: SeededBackend, log: CellLog):
        super().__init__(inner)
        self._log = log

    @property
    def simulated(self) -> bool:
        """Whether an answer of this cell's calls was simulated (see ``SeededBackend``)."""
        return self.inner.simulated

    def _sink(self, event: RetryEvent) -> None:
        self._log.event("retry", **event.fields())

    def complete(self, messages: Sequence[Message], *, deadline: float | None = None,
                 **params: object) -> Completion:
        """``inner.complete``, its retries reported to the cell's log."""
        with report_retries(self._sink):
            return self.inner.complete(messages, deadline=deadline, **params)


@dataclass(frozen=True)
class Scored:
    """One probe's outcome for one recaller, with the measures scored while it was asked."""

    outcome: ProbeOutcome
    metrics: Mapping[str, float]


def run_cell(setup: CellSetup, cell: Cell, corpus: Corpus, res: Resources, log: EventLog) -> CellRows:
    """The tidy rows of one cell, grouped (nothing is written here; the runner writes them atomically).

    The cell's kind runs it (``CellKind.run``).  A failure that would fail the same way again (a bad
    request, a system that cannot start, ``_failures.deterministic``) gives the cell's rows of that
    failure (``failed.<stage>.<reason>``); any other ``BackendError`` or ``MemorySystemError``
    propagates and fails the cell for this run only.
    """
    try:
        return cell.kind.run(setup, cell, corpus, res, log)
    except CELL_FAILURES as exc:
        failure = deterministic(exc)
        if failure is None:
            raise
        log.event("cell_failed_for_good", cell_id=cell.cell_id, pipeline=cell.label, failure=failure.metric,
                  error=str(exc))
        return failed_rows(cell.kind.columns(setup, cell), failure)


def cell_models(setup: CellSetup, cell: Cell, res: Resources, log: EventLog) -> tuple[RetryReporting, "_AnswerBackends | None", CellLog]:
    """The cell's backend (seeded, its retries logged), its answering models and judges, and its log."""
    clog = CellLog(log, cell.cell_id)
    backend = RetryReporting(SeededBackend(res.backend(cell.backend), cell.seed), clog)
    return backend, _answer_backends(setup, cell, res, backend, clog), clog


def run_pipeline_cell(setup: CellSetup, cell: Cell, corpus: Corpus, res: Resources, log: EventLog) -> CellRows:
    """The rows of a cell of lyra-lab's own pipeline (see the module docstring)."""
    if not isinstance(cell.pipeline, Pipeline):
        raise TypeError(f"cell {cell.cell_id} runs a memory system, not a pipeline")
    conv = corpus.conversation(cell.conversation_id)
    probes = list(corpus.probes_for(conv.id))
    clog = CellLog(log, cell.cell_id)
    backend = RetryReporting(SeededBackend(res.backend(cell.backend), cell.seed), clog)
    flushes = sum(1 for s in plan(conv, probes, cell.pipeline.trigger) if s.kind == "flush")
    recallers = dict(setup.recallers)
    clog.event("cell_started", pipeline=cell.label, backend=cell.backend_label, embedder=cell.embedder_label,
               seed=cell.seed, conversation_id=conv.id, probes=len(probes), flushes=flushes,
               answers=len(recallers) * answers_per_recaller(setup, len(probes)), spec=cell.pipeline.to_dict())
    bar = tqdm(total=flushes + len(probes) * len(recallers), desc=f"{cell.label} · {conv.id}", unit="step",
               leave=False, disable=None if setup.progress else True)
    replay_setup = ReplaySetup(backend, embedder=res.embedder(cell.embedder), recallers=recallers,
                               k=setup.scoring.k, workers=setup.workers, log=clog, on_event=_progress(bar),
                               room=answer_room(setup.recallers, setup.answering, cell.backend))
    session_of = session_map(conv.turns())
    scored: dict[str, list[Scored]] = {label: [] for label in recallers}
    run = replay_iter(conv, probes, cell.pipeline, replay_setup)
    try:
        with report_progress(_log_progress(clog)):  # long embedding calls of this thread report to the log
            for asked in run:
                for outcome in asked:
                    metrics = score_recall(outcome, setup.scoring, session_of)
                    if outcome.answer_room is not None:  # the budget of a whole-memory recaller's context
                        metrics["answer_room"] = float(outcome.answer_room)
                    scored[outcome.recaller].append(Scored(outcome, metrics))
    finally:
        bar.close()
    backends = _answer_backends(setup, cell, res, backend, clog)
    rows = CellRows()
    attempts = dict(run.result.attempts)
    pool = ControlPool.from_texts((t.text for t in conv.turns()), (p.answer for p in probes))
    for number, (label, recaller) in enumerate(setup.recallers):
        base = base_columns(setup.run, cell, label, recaller, setup.corpus)
        # judge controls once per cell: they do not depend on the recaller (the first one's stage sends them)
        stage = None if backends is None or setup.answering is None else \
            AnswerStage(setup.answering, backends.answerer, backends.judges, clog, pool if number == 0 else None)
        limit = 0 if setup.answering is None else min(len(scored[label]), setup.answering.max_probes or len(scored[label]))
        first = len(rows.groups)
        for i, item in enumerate(scored[label]):
            answers = stage.answer_all(item.outcome.probe, item.outcome.context, label, cell.seed) \
                if stage is not None and i < limit else ()
            add_answered_rows(rows, base, item.outcome.probe, item.metrics,
                              ProbeAnswers(answers, setup.answering, evidence_in_context(item.outcome) if answers else {}))
            clog.event(DETAIL_EVENT, **probe_record(item.outcome, label, answers))
        degraded = run.result.degraded + (stage.degradation_tally() if stage is not None else DegradationTally())
        add_conversation_rows(rows, base, {**_conversation_metrics(run.result, label, stage), **degraded.metrics()})
        for group in rows.groups[first:]:
            group.columns["degraded"] = degraded.total
        if stage is not None:
            for phase, tally in stage.attempt_tally().items():
                attempts[phase] = attempts.get(phase, AttemptTally()) + tally
    clog.event("call_attempts", phases={phase: tally.metrics() for phase, tally in attempts.items() if tally},
               summary=str(sum(attempts.values(), AttemptTally())),
               degraded=run.result.degraded.metrics())
    rows.set_column("simulated", backend.simulated or (backends is not None and backends.simulated()))
    if setup.answering is not None:  # QA figures scored under different rules must never mix silently
        rows.set_column("qa.scorer", setup.answering.scorer)
    return rows


def answers_per_recaller(setup: CellSetup, probes: int) -> int:
    """The answers a recaller's answering stage gives in a cell of ``probes`` probes (0: no QA).

    Each answered probe is asked under every ``[qa]`` prompt × repeat (``AnswerSetup.asked``), an
    ``answer`` event each.
    """
    if setup.answering is None:
        return 0
    return min(probes, setup.answering.max_probes or probes) * len(setup.answering.asked)


def _log_progress(log: CellLog) -> Callable[[ProgressEvent], None]:
    """A progress sink writing a ``progress`` event (done, total, rate, ETA) to the cell's run log."""

    def sink(event: ProgressEvent) -> None:
        log.event("progress", **event.fields())

    return sink


def _progress(bar: "tqdm[object]") -> Callable[[str, Mapping[str, object]], None]:
    """The replay's progress callback: one step per flush written and per probe × recaller asked."""

    def on_event(kind: str, fields: Mapping[str, object]) -> None:
        if kind in ("summary_written", "recall"):
            bar.update(1)
        elif kind == "summarize_progress":
            bar.set_postfix_str(_progress_postfix(fields), refresh=False)

    return on_event


def _progress_postfix(fields: Mapping[str, object]) -> str:
    """``flush 3 · chunk 2/5`` for a summarizer progress event."""
    stage, i, n = fields.get("stage"), fields.get("i"), fields.get("n")
    where = f"chunk {i}/{n}" if stage == "chunk_done" and i is not None else str(stage).replace("_", " ")
    return f"flush {fields.get('flush')} · {where}"


@dataclass(frozen=True)
class _AnswerBackends:
    """The backends of a cell's answering stage, built once: the answering model and every judge's."""

    answerer: RetryReporting
    judges: tuple[Judge, ...]

    def simulated(self) -> bool:
        """Whether an answering or judging call of this cell was simulated."""
        return self.answerer.simulated or any(isinstance(j.backend, RetryReporting) and j.backend.simulated
                                              for j in self.judges)


def _answer_backends(setup: CellSetup, cell: Cell, res: Resources, backend: RetryReporting,
                     log: CellLog) -> _AnswerBackends | None:
    if setup.answering is None:
        return None

    def wrapped(spec: BackendSpec) -> RetryReporting:
        return RetryReporting(SeededBackend(res.backend(spec), cell.seed), log)

    answerer = backend if setup.answering.backend is None else wrapped(setup.answering.backend)
    return _AnswerBackends(answerer, tuple(Judge(config, wrapped(config.backend)) for config in setup.judges))


def _conversation_metrics(result: ReplayResult, label: str, stage: AnswerStage | None) -> dict[str, float]:
    phases = {**result.phases, **result.recall_phases.get(label, {})}
    cached = result.cached_calls
    if stage is not None:
        phases.update(stage.meter.phases(stage.phases()))
        cached += stage.meter.cached_calls
    metrics = phase_metrics(phases)
    metrics.update(memory_entries=float(result.memory_entries), memory_tokens=float(result.memory_tokens),
                   cached_calls=float(cached), flushes=float(result.flushes))
    return metrics
