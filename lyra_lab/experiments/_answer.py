"""The answering stage of a cell: each probe answered from its recalled context, and every judge's verdict.

It runs after the replay, on the contexts the replay rendered: answering needs no memory.
Every call is metered in the cell's ``answer`` and ``judge`` phases and logged (an ``answer``
event with the text); a judge that never answered (a failed call) leaves no ``judge`` row.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

from lyra_lab.backends import Backend, Completion
from lyra_lab.corpus import Probe
from lyra_lab.experiments._plan import AnswerPlan
from lyra_lab.measures import JudgeConfig, JudgeResult, answer_probe, judge_answer
from lyra_lab.replay import EventLog, PhaseMeter


@dataclass(frozen=True)
class Answered:
    """One probe's answer and every judge's verdict on it (``(judge label, verdict)``)."""

    answer: Completion
    verdicts: tuple[tuple[str, JudgeResult], ...] = ()


@dataclass(frozen=True)
class Judge:
    """A judge of the run with the backend its calls go to."""

    config: JudgeConfig
    backend: Backend


class AnswerStage:
    """Answers probes on one backend and has each judge grade each answer (one cell, one recaller at a time).

    Args:
        plan: the answering settings.
        backend: the answering model.
        judges: the judges, each on its backend.
        log: the cell's event log.
    """

    def __init__(self, plan: AnswerPlan, backend: Backend, judges: Sequence[Judge], log: EventLog):
        self.plan, self.backend, self.judges, self.log = plan, backend, tuple(judges), log
        self.meter = PhaseMeter(log.event)

    def answer(self, probe: Probe, context: str, recaller: str) -> Answered:
        """``probe`` answered from ``context``, then graded by every judge."""
        start = time.perf_counter()
        answer = answer_probe(probe, context, self.backend, self.plan.prompt, max_tokens=self.plan.max_tokens)
        self.meter.wall("answer", time.perf_counter() - start)
        self.meter.completions("answer", [answer], probe_id=probe.id, recaller=recaller)
        self.log.event("answer", probe_id=probe.id, recaller=recaller, text=answer.text[:500])
        verdicts = []
        for judge in self.judges:
            start = time.perf_counter()
            verdict = judge_answer(probe, answer.text, judge.backend, judge.config.prompt,
                                   max_tokens=judge.config.max_tokens)
            self.meter.wall("judge", time.perf_counter() - start)
            paid = [verdict.completion] if verdict.completion is not None else []
            self.meter.completions("judge", paid, probe_id=probe.id, recaller=recaller, judge=judge.config.label)
            verdicts.append((judge.config.label, verdict))
        return Answered(answer, tuple(verdicts))

    def phases(self) -> tuple[str, ...]:
        """The phases this stage reports: ``answer``, and ``judge`` when there are judges."""
        return ("answer", "judge") if self.judges else ("answer",)
