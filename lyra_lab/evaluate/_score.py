"""All per-probe metrics of one ``ProbeOutcome``, named as in the results schema.

``score_outcome`` is what replay/experiments call for every probe × recaller.
Which metrics appear:

* ``recall@K``, ``recall_any@K``, ``ndcg@K`` for every K in ``ks``, and ``mrr`` —
  when the probe has evidence and does not expect abstention (adversarial
  evidence points at the turn the trap was built from, not at an answer, so
  it is left out of retrieval scores by default); ``session_recall@K`` too when
  a turn→session mapping is given.
* ``retention`` and ``context_retention`` (see ``_retention``).
* ``context_tokens`` and ``recall_latency_s`` always.
* ``qa_em``, ``qa_f1`` when an ``answer`` is given; ``answer_latency_s`` and
  ``answer_cost_usd`` too when it is a ``Completion``.
* ``judge`` when a ``JudgeResult`` is given.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from lyra_lab.backends._types import Completion
from lyra_lab.evaluate._judge import JudgeResult
from lyra_lab.evaluate._qa import expects_abstention, score_answer
from lyra_lab.evaluate._retention import DEFAULT_RETENTION_THRESHOLD, retention_scores
from lyra_lab.evaluate._retrieval import (
    SessionOf,
    any_recall_at,
    evidence_recall_at,
    mrr,
    ndcg_at,
    session_recall_at,
    turn_groups,
)


def check_ks(ks: Iterable[int]) -> tuple[int, ...]:
    """``ks`` as a sorted tuple of distinct positive ints; raises ``ValueError`` otherwise."""
    out = tuple(sorted(set(ks)))
    if not out or any(not isinstance(k, int) or isinstance(k, bool) or k < 1 for k in out):
        raise ValueError(f"ks must be positive integers, got {ks!r}")
    return out


def retrieval_scores(
    evidence: Iterable[str],
    groups: list[tuple[str, ...]],
    ks: Iterable[int],
    session_of: SessionOf | None = None,
    n_relevant: int | None = None,
) -> dict[str, float]:
    """``recall@K``, ``recall_any@K``, ``ndcg@K`` (, ``session_recall@K``) per K, and ``mrr``."""
    evidence = tuple(evidence)
    scores: dict[str, float] = {}
    for k in check_ks(ks):
        scores[f"recall@{k}"] = evidence_recall_at(evidence, groups, k)
        scores[f"recall_any@{k}"] = any_recall_at(evidence, groups, k)
        scores[f"ndcg@{k}"] = ndcg_at(evidence, groups, k, n_relevant=n_relevant)
        if session_of is not None:
            scores[f"session_recall@{k}"] = session_recall_at(evidence, groups, k, session_of)
    scores["mrr"] = mrr(evidence, groups)
    return scores


def score_outcome(
    outcome,
    ks: Iterable[int],
    session_of: SessionOf | None = None,
    *,
    answer: Completion | str | None = None,
    judge: JudgeResult | None = None,
    n_relevant: int | None = None,
    scorer: str = "squad",
    retention_threshold: float = DEFAULT_RETENTION_THRESHOLD,
    score_adversarial_retrieval: bool = False,
) -> dict[str, float]:
    """Metric name → value for one probe outcome (see the module docstring).

    Args:
        outcome: a ``lyra_lab.replay.ProbeOutcome``.
        ks: cutoffs for the @K metrics.
        session_of: turn id → session id (a mapping or a function), for ``session_recall@K``.
        answer: the answering model's reply (a ``Completion`` or its text), if QA is on.
        judge: the judge's verdict on that answer, if a judge is on.
        scorer: the QA scorer (``squad``, ``locomo`` or ``longmemeval``; see ``score_answer``).
        n_relevant: relevant entries in memory for nDCG's ideal list (default: evidence count).
        retention_threshold: token-recall threshold of the retention rule.
        score_adversarial_retrieval: also score retrieval of adversarial/abstention probes.
    """
    probe = outcome.probe
    ks = check_ks(ks)
    scores: dict[str, float] = {}
    if probe.evidence and (score_adversarial_retrieval or not expects_abstention(probe)):
        scores.update(retrieval_scores(probe.evidence, turn_groups(outcome.hits), ks, session_of, n_relevant))
    scores.update(retention_scores(outcome, retention_threshold))
    scores["context_tokens"] = float(outcome.context_tokens)
    scores["recall_latency_s"] = float(outcome.recall_latency_s)
    if answer is not None:
        text = answer.text if isinstance(answer, Completion) else str(answer)
        scores.update(score_answer(probe, text, scorer))
        if isinstance(answer, Completion):
            scores["answer_latency_s"] = float(answer.latency_s)
            scores["answer_cost_usd"] = float(answer.usage.cost_usd)
    if judge is not None:
        scores["judge"] = float(judge.score)
    return scores


def session_map(turns: Iterable) -> Mapping[str, str]:
    """Turn id → session id for ``score_outcome``'s ``session_of`` (e.g. ``session_map(conv.turns())``)."""
    return {turn.id: turn.session_id for turn in turns}
