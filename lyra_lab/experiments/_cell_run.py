"""One cell: replay a conversation through a memory pipeline, answer and score its probes, make rows."""

from __future__ import annotations

import time
from typing import Any, Sequence

from tqdm.auto import tqdm

from lyra_lab.backends import BackendWrapper, Completion, Message, RetryEvent, report_retries
from lyra_lab.runs import CellRows
from lyra_lab.experiments._cells import (Cell, add_conversation_rows, add_probe_rows, base_columns, phase_metrics,
                                         spec_label)
from lyra_lab.experiments._judges import judges_of
from lyra_lab.experiments._resources import Resources, SeededBackend
from lyra_lab.replay import PhaseMeter, plan, replay


class CellLog:
    """The run log as one cell sees it: every event carries the cell id."""

    def __init__(self, log: Any, cell_id: str):
        self._log = log
        self.cell_id = cell_id

    def event(self, event: str, /, **fields: Any) -> None:
        self._log.event(event, cell_id=self.cell_id, **fields)


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

    def complete(self, messages: Sequence[Message], **params: Any) -> Completion:
        with report_retries(self._sink):
            return self.inner.complete(messages, **params)


def _progress_postfix(fields: Any) -> str:
    """``flush 3 · chunk 2/5`` for a summarizer progress event."""
    stage, i, n = fields.get("stage"), fields.get("i"), fields.get("n")
    where = f"chunk {i}/{n}" if stage == "chunk_done" and i is not None else str(stage).replace("_", " ")
    return f"flush {fields.get('flush')} · {where}"


def run_cell(spec: Any, cell: Cell, corpus: Any, res: Resources, log: Any, progress: bool = True) -> CellRows:
    """The tidy rows of one cell, grouped (nothing is written here; the runner writes them atomically)."""
    from lyra_lab.measures import answer_probe, judge_answer, score_outcome, session_map
    from lyra_lab.runs import DETAIL_EVENT, probe_record

    conv = corpus.conversation(cell.conversation_id)
    probes = corpus.probes_for(conv.id)
    clog = CellLog(log, cell.cell_id)
    backend = RetryReporting(SeededBackend(res.backend(cell.backend), cell.seed), clog)
    embedder = res.embedder(cell.embedder)
    clog.event("cell_started", pipeline=cell.label, backend=spec_label(cell.backend),
               embedder=spec_label(cell.embedder), seed=cell.seed, conversation_id=conv.id, probes=len(probes),
               spec=cell.pipeline.to_dict())
    recallers = dict(spec.recallers)
    flushes = sum(1 for s in plan(conv, probes, cell.pipeline.trigger) if s.kind == "flush")
    bar = tqdm(total=flushes + len(probes) * len(recallers), desc=f"{cell.label} · {conv.id}", unit="step",
               leave=False, disable=None if progress else True)

    def on_event(kind: str, fields: Any) -> None:
        if kind in ("summary_written", "recall"):
            bar.update(1)
        elif kind == "summarize_progress":
            bar.set_postfix_str(_progress_postfix(fields), refresh=False)

    try:
        result = replay(conv, probes, cell.pipeline, backend=backend, embedder=embedder, recallers=recallers,
                        k=max(spec.ks), log=clog, on_event=on_event, workers=spec.workers,
                        depth=None if spec.context_budgets else max(spec.ks))  # the deep ranking only feeds budgets
    finally:
        bar.close()

    qa_backend = None
    if spec.qa.enabled:
        qa_backend = backend if not spec.qa.backend else RetryReporting(
            SeededBackend(res.backend(spec.qa.backend), cell.seed), clog)
    judges = [(j, RetryReporting(SeededBackend(res.backend(j.backend), cell.seed), clog)) for j in judges_of(spec)]
    session_of = session_map(conv.turns())
    rows = CellRows()
    for label, recaller in spec.recallers:
        base = base_columns(spec.name, cell, label, recaller, corpus.name, simulated=False)
        meter = PhaseMeter(clog.event)
        outcomes = result.outcomes[label]
        n_qa = 0 if qa_backend is None else min(len(outcomes), spec.qa.max_probes or len(outcomes))
        for i, outcome in enumerate(tqdm(outcomes, desc=f"score {label}", leave=False,
                                         disable=None if progress and n_qa else True)):
            answer, verdicts = None, []
            if i < n_qa and qa_backend is not None:
                start = time.perf_counter()
                answer = answer_probe(outcome.probe, outcome.context, qa_backend, spec.qa.prompt,
                                      max_tokens=spec.qa.max_tokens)
                meter.wall("answer", time.perf_counter() - start)
                meter.completions("answer", [answer], probe_id=outcome.probe.id, recaller=label)
                clog.event("answer", probe_id=outcome.probe.id, recaller=label, text=answer.text[:500])
                for judge, judge_backend in judges:
                    start = time.perf_counter()
                    verdict = judge_answer(outcome.probe, answer.text, judge_backend, judge.prompt,
                                           max_tokens=judge.max_tokens)
                    meter.wall("judge", time.perf_counter() - start)
                    paid = [verdict.completion] if verdict.completion is not None else []
                    meter.completions("judge", paid, probe_id=outcome.probe.id, recaller=label, judge=judge.label)
                    verdicts.append((judge.label, verdict))
            metrics = score_outcome(outcome, spec.ks, session_of, answer=answer, scorer=spec.qa.scorer,
                                    context_budgets=spec.context_budgets,
                                    score_adversarial_retrieval=spec.score_adversarial_retrieval)
            add_probe_rows(rows, base, outcome.probe, metrics, verdicts)
            clog.event(DETAIL_EVENT, **probe_record(outcome, label, answer, verdicts))
        phases = {**result.phases, **result.recall_phases.get(label, {})}
        if qa_backend is not None:
            phases.update(meter.phases(("answer", "judge") if judges else ("answer",)))
        metrics = phase_metrics(phases)
        metrics.update(memory_entries=result.memory_entries, memory_tokens=result.memory_tokens,
                       cached_calls=result.cached_calls + meter.cached_calls, flushes=result.flushes)
        add_conversation_rows(rows, base, metrics)
    simulated = any(b is not None and b.simulated for b in (backend, qa_backend, *(jb for _, jb in judges)))
    rows.set_column("simulated", simulated)
    if spec.qa.enabled:  # QA figures scored under different rules must never mix silently
        rows.set_column("qa.scorer", spec.qa.scorer)
    return rows
