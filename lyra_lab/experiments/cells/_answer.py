"""The answering stage of a cell: each probe answered from its recalled context, and every judge's verdict.

It runs after the replay, on the contexts the replay rendered: answering needs no memory.
Every call is metered in the cell's ``answer`` and ``judge`` phases and logged (an ``answer``
event with the text).  A call that fails for good (``BackendError``: its retries exhausted, its
deadline passed, a failure retrying cannot fix) is degradation, counted, never a silent 0: a failed
answer is ``degraded.answer.failed`` and its probe gets no QA score (nor verdicts); a failed judge call
is ``degraded.judge.failed`` and leaves no ``judge`` row.  Both are in ``degradation_tally()`` and,
like every fallback, a ``degraded`` event in the run log.  A call the provider refused itself
(``BackendError.recurs``: an HTTP 400 every time) is counted ``failed.<stage>.<recurs>`` instead
(``failed.answer.bad_request``): a resume would only pay for it again, so a plain resume keeps the cell.

Judge controls (``JudgeConfig.controls``, on by default): a stage given a ``ControlPool`` (the
cell's first recaller's) also sends each judge, for each probe it judges, the probe's controls —
the gold itself and wrong but on-topic answers built from the conversation
(``lyra_lab.measures.judge_controls``) — metered in phase ``judge_control`` and returned apart
from the real verdicts (``Answered.controls``), so they never mix into a judged accuracy.  A
control call that fails for good is ``degraded.judge_control.failed`` and leaves no control row.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

from lyra_lab._degradation import Degradation, DegradationTally
from lyra_lab.backends import AttemptTally, Backend, BackendError, Completion
from lyra_lab.corpus import Probe
from lyra_lab.experiments.cells._setup import AnswerSetup
from lyra_lab.measures import (ControlPool, ControlVerdict, JudgeConfig, JudgeResult, answer_probe, judge_answer,
                               judge_controls)
from lyra_lab.replay import EventLog, PhaseMeter


@dataclass(frozen=True)
class Answered:
    """One probe's answer and every judge's verdict on it (``(judge label, verdict)``).

    ``answer`` is None when the answering call failed for good (``degraded.answer.failed``).
    """

    answer: Completion | None
    verdicts: tuple[tuple[str, JudgeResult], ...] = ()
    controls: tuple[ControlVerdict, ...] = ()
    prompt: str = ""  # the answer prompt it was asked under (``AnswerSetup.asked``)
    repeat: int = 0


#: A repeat ``r > 0`` of a cell of seed ``s`` sends seed ``s + r * REPEAT_SEED_STRIDE`` (repeat 0: ``s``).
REPEAT_SEED_STRIDE = 1_000_003


@dataclass(frozen=True)
class Ask:
    """One of the answers a probe is asked for: under which prompt, which repeat."""

    prompt: str
    repeat: int = 0
    seed: int | None = None  # None: the backend's own (the cell's seed)


def repeat_seed(seed: int, repeat: int) -> int | None:
    """The seed repeat ``repeat`` sends (None for repeat 0: the cell's own, so one repeat is a plain run)."""
    return None if repeat == 0 else seed + repeat * REPEAT_SEED_STRIDE


@dataclass(frozen=True)
class Judge:
    """A judge of the run with the backend its calls go to."""

    config: JudgeConfig
    backend: Backend


class AnswerStage:
    """Answers probes on one backend and has each judge grade each answer (one cell, one recaller at a time).

    Args:
        setup: the answering settings.
        backend: the answering model.
        judges: the judges, each on its backend.
        log: the cell's event log.
        controls: the conversation's control pool: judges with ``controls`` also grade each judged
            probe's controls (None: no controls, e.g. for the cell's other recallers, whose probes
            the first recaller's stage already controlled).
    """

    def __init__(self, setup: AnswerSetup, backend: Backend, judges: Sequence[Judge], log: EventLog,
                 controls: ControlPool | None = None):
        self.setup, self.backend, self.judges, self.log = setup, backend, tuple(judges), log
        self.controls = controls
        self.meter = PhaseMeter(log.event)

    def answer_all(self, probe: Probe, context: str, recaller: str, seed: int = 0) -> tuple[Answered, ...]:
        """``probe`` answered from the same ``context`` under every prompt × repeat (``AnswerSetup.asked``).

        ``seed`` is the cell's: repeat ``r`` sends ``repeat_seed(seed, r)``.  Judge controls go with
        the first answer only: they do not depend on the answer.
        """
        return tuple(self.answer(probe, context, recaller, Ask(prompt, repeat, repeat_seed(seed, repeat)))
                     for prompt, repeat in self.setup.asked)

    def answer(self, probe: Probe, context: str, recaller: str, ask: Ask | None = None) -> Answered:
        """``probe`` answered from ``context`` (under ``ask``, None: the setup's prompt), then graded by every judge.

        The judges' controls are sent with the setup's first ``(prompt, repeat)`` only.
        """
        ask = ask or Ask(self.setup.asked[0][0])
        controls = (ask.prompt, ask.repeat) == self.setup.asked[0]
        where = {"answer_prompt": ask.prompt, "repeat": ask.repeat} if self.setup.varied else {}
        start = time.perf_counter()
        try:
            answer = answer_probe(probe, context, self.backend, ask.prompt, max_tokens=self.setup.max_tokens,
                                  temperature=self.setup.temperature, seed=ask.seed)
        except BackendError as exc:
            self.meter.wall("answer", time.perf_counter() - start)
            self._failed("answer", f"probe {probe.id}", exc, probe_id=probe.id, recaller=recaller, **where)
            self.log.event("answer", probe_id=probe.id, recaller=recaller, text=None, failed=True,
                           error=str(exc)[:300], **where)
            return Answered(None, prompt=ask.prompt, repeat=ask.repeat)
        self.meter.wall("answer", time.perf_counter() - start)
        self.meter.completions("answer", [answer], probe_id=probe.id, recaller=recaller, **where)
        self.log.event("answer", probe_id=probe.id, recaller=recaller, text=answer.text[:500], **where)
        verdicts = []
        for judge in self.judges:
            start = time.perf_counter()
            try:
                verdict = judge_answer(probe, answer.text, judge.backend, judge.config.prompt,
                                       max_tokens=judge.config.max_tokens)
            except BackendError as exc:
                self.meter.wall("judge", time.perf_counter() - start)
                self._failed("judge", f"probe {probe.id}: judge {judge.config.label}", exc, probe_id=probe.id,
                             recaller=recaller, judge=judge.config.label)
                continue
            self.meter.wall("judge", time.perf_counter() - start)
            paid = [verdict.completion] if verdict.completion is not None else []
            self.meter.completions("judge", paid, probe_id=probe.id, recaller=recaller, judge=judge.config.label)
            verdicts.append((judge.config.label, verdict))
        return Answered(answer, tuple(verdicts), self._controls(probe, recaller) if controls else (), ask.prompt,
                        ask.repeat)

    def _controls(self, probe: Probe, recaller: str) -> tuple[ControlVerdict, ...]:
        """Every controlled judge's verdicts on ``probe``'s controls (none without a pool)."""
        if self.controls is None:
            return ()
        out = []
        for control in judge_controls(probe, self.controls):
            for judge in (j for j in self.judges if j.config.controls):
                start = time.perf_counter()
                try:
                    verdict = judge_answer(probe, control.answer, judge.backend, judge.config.prompt,
                                           max_tokens=judge.config.max_tokens)
                except BackendError as exc:
                    self.meter.wall("judge_control", time.perf_counter() - start)
                    self._failed("judge_control", f"probe {probe.id}: judge {judge.config.label}, control "
                                 f"{control.kind}", exc, probe_id=probe.id, recaller=recaller,
                                 judge=judge.config.label)
                    continue
                self.meter.wall("judge_control", time.perf_counter() - start)
                paid = [verdict.completion] if verdict.completion is not None else []
                self.meter.completions("judge_control", paid, probe_id=probe.id, recaller=recaller,
                                       judge=judge.config.label, control=control.kind)
                out.append(ControlVerdict(judge.config.label, control, verdict, judge.config.corrected))
        return tuple(out)

    def _failed(self, stage: str, where: str, exc: BackendError, **context: object) -> None:
        """Count a call of ``stage`` that failed for good (``degraded.<stage>.failed``) and log it."""
        self.meter.degradations(stage, [Degradation(stage, "failed", where, exc.gave_up, str(exc), exc.attempts,
                                                    recurs=exc.recurs)], **context)

    def degradation_tally(self) -> DegradationTally:
        """The answering and judging calls that failed for good so far, per ``(stage, "failed")``."""
        return self.meter.degradation_tally()

    def attempt_tally(self) -> dict[str, AttemptTally]:
        """Phase (``answer``, ``judge``) → how many attempts its calls needed, and the calls that failed."""
        return {phase: self.meter.attempt_tally(phase) for phase in self.phases()}

    def phases(self) -> tuple[str, ...]:
        """The phases this stage reports: ``answer``, ``judge`` when there are judges, ``judge_control`` with controls."""
        if not self.judges:
            return ("answer",)
        controlled = self.controls is not None and any(j.config.controls for j in self.judges)
        return ("answer", "judge", "judge_control") if controlled else ("answer", "judge")
