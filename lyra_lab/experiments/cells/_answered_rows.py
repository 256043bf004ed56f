"""A probe's rows once it is answered: its recall metrics, and each answer's QA scores and verdicts.

One answer (a run without ``[qa] prompts`` or ``repeats``) goes in the probe's own rows, as it always
did.  Several (``AnswerSetup.varied``) each get rows of their own naming ``answer_prompt`` and
``repeat``, so ``lyra_lab.stats.row_pipeline_labels`` tells the prompts apart as pipelines and the
repeats nest inside a probe as seeds do.  The recall metrics stay in the probe's rows once;
``evidence_in_context`` (the context every answer shares) goes with each answer's scores, so the
retrieval/answering split (``lyra_lab.reports``) reads each prompt as a pipeline of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from lyra_lab.corpus import Probe
from lyra_lab.experiments.cells._answer import Answered
from lyra_lab.experiments.cells._cell import add_control_rows, add_probe_rows
from lyra_lab.experiments.cells._setup import AnswerSetup
from lyra_lab.measures import answer_scores
from lyra_lab.runs import CellRows


@dataclass(frozen=True)
class ProbeAnswers:
    """A probe's answers and what scores them.

    Attributes:
        answers: its answers (``AnswerStage.answer_all``), none when it was not answered.
        answering: the answering setup (None: the run answers nothing).
        in_context: ``evidence_in_context`` of its context, added once it has an answer.
    """

    answers: Sequence[Answered]
    answering: AnswerSetup | None
    in_context: Mapping[str, float]


def add_answered_rows(rows: CellRows, base: Mapping[str, object], probe: Probe, metrics: Mapping[str, float],
                      answered: ProbeAnswers) -> None:
    """``probe``'s rows: ``metrics`` (its recall), then what its answers scored under the setup's scorer.

    Args:
        rows: the cell's rows.
        base: the columns of every row of this cell × recaller.
        probe: the probe.
        metrics: its recall metrics.
        answered: its answers, their setup and its context's ``evidence_in_context``.
    """
    answers, answering, in_context = answered.answers, answered.answering, answered.in_context
    paid = [a for a in answers if a.answer is not None]
    own = dict(metrics)
    if answering is None or not paid:
        add_probe_rows(rows, base, probe, own)
    elif not answering.varied:
        first = paid[0]
        assert first.answer is not None
        own.update(answer_scores(probe, first.answer, answering.scorer))
        own.update(in_context)
        add_probe_rows(rows, base, probe, own, first.verdicts)
    else:
        add_probe_rows(rows, base, probe, own)
        for a in paid:
            assert a.answer is not None
            add_probe_rows(rows, {**base, "answer_prompt": a.prompt, "repeat": a.repeat}, probe,
                           {**answer_scores(probe, a.answer, answering.scorer), **in_context}, a.verdicts)
    controls = answers[0].controls if answers else ()
    if controls:
        add_control_rows(rows, base, probe, controls)
