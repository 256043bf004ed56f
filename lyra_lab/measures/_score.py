"""All per-probe metrics of one ``ProbeOutcome``, named as in the results schema.

``score_outcome`` is what replay/experiments call for every probe × recaller.
Each name says what it measures (definitions in ``_retrieval`` and ``_budget``;
they mean the same for a memory of raw turns and one of digests):

* At every K in ``ks``: ``evidence_recall@K`` (evidence turns retrieved
  directly, in a verbatim entry), ``coverage_recall@K`` (evidence turns covered
  by a retrieved entry, a digest covering every turn it folds), LongMemEval's
  ``recall_all@K`` / ``recall_any@K`` (all / any evidence covered),
  ``ndcg@K`` and LongMemEval's ``ndcg_any@K`` (ideal list = the relevant
  entries in memory, ``ProbeOutcome.n_relevant``), and ``mrr`` — when the probe
  has evidence and does not expect abstention (adversarial evidence points at
  the turn the trap was built from, not at an answer, so it is left out of
  retrieval scores by default); ``session_recall@K`` too when a turn→session
  mapping is given, with LongMemEval's session-level ``session_recall_all@K`` and
  ``session_ndcg_any@K`` (over the distinct sessions of the hits, in rank order;
  the ideal list holds every evidence session).
* At every budget B in ``context_budgets`` (tokens): ``answer_in_context@Btok``,
  ``evidence_recall@Btok``, ``coverage_recall@Btok``, ``context_tokens@Btok``
  (see ``_budget``: every pipeline gets the same rendered-context size).
* ``retention`` and ``context_retention`` (see ``_retention``).
* ``context_tokens`` and ``recall_latency_s`` always.
* ``qa_em``, ``qa_f1`` when an ``answer`` is given; ``answer_latency_s`` and
  ``answer_cost_usd`` too when it is a ``Completion``.
* ``judge`` when a ``JudgeResult`` is given.

Which one is fair across memory kinds: ``answer_in_context@Btok`` (same room
for every pipeline, and a summary scores only if its text kept the answer) and
``evidence_recall@K``.  ``coverage_recall@K`` is today's flattering "recall":
over summaries alone it can reach 1.0 while the summaries lost the answer.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, Sequence

from lyra_lab.backends import Completion
from lyra_lab.measures._budget import budget_scores, context_retained
from lyra_lab.measures._judge import JudgeResult
from lyra_lab.measures._qa import score_answer
from lyra_lab.measures._retrieval import (RankedEvidence, SessionOf, first_appearances, ndcg_any_discount,
                                          to_sessions, turn_groups, verbatim_flags)
from lyra_lab.matching import DEFAULT_RETENTION_THRESHOLD, expects_abstention, retention_scores


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
    verbatim: Sequence[bool] | None = None,
) -> dict[str, float]:
    """The @K retrieval metrics of the module docstring, per K, and ``mrr``.

    ``verbatim``: per hit, whether its entry holds its turns verbatim (None: all do).
    """
    evidence, ks = tuple(evidence), check_ks(ks)
    ranked = RankedEvidence(evidence, groups, verbatim)
    scores: dict[str, float] = {}
    by_hit = by_session = None  # the hits' sessions; their session ranking (LongMemEval's session level)
    for k in ks:
        scores[f"evidence_recall@{k}"] = ranked.recall(k)
        scores[f"coverage_recall@{k}"] = ranked.coverage(k)
        scores[f"recall_all@{k}"] = ranked.recall_all(k)
        scores[f"recall_any@{k}"] = ranked.recall_any(k)
        scores[f"ndcg@{k}"] = ranked.ndcg(k, n_relevant)
        scores[f"ndcg_any@{k}"] = ranked.ndcg(k, n_relevant, ndcg_any_discount)
        if session_of is not None:
            if by_hit is None or by_session is None:
                ev_sessions = to_sessions(evidence, session_of)
                sessions = [to_sessions(group, session_of) for group in groups]
                by_hit, by_session = RankedEvidence(ev_sessions, sessions), \
                    RankedEvidence(ev_sessions, first_appearances(sessions))
            scores[f"session_recall@{k}"] = by_hit.coverage(k)
            scores[f"session_recall_all@{k}"] = by_session.recall_all(k)
            scores[f"session_ndcg_any@{k}"] = by_session.ndcg(k, len(by_session.evidence), ndcg_any_discount)
    scores["mrr"] = ranked.mrr()
    return scores


def score_outcome(
    outcome,
    ks: Iterable[int],
    session_of: SessionOf | None = None,
    *,
    answer: Completion | str | None = None,
    judge: JudgeResult | None = None,
    n_relevant: int | None = None,
    context_budgets: Iterable[int] = (),
    count: Callable[[str], int] | None = None,
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
        n_relevant: relevant entries in memory for nDCG's ideal list (default:
            ``outcome.n_relevant`` as replay counted it, else the evidence count).
        context_budgets: token budgets B for the ``@Btok`` metrics (none by default).
        count: token counter for the budgets (default: ``outcome.count``, the pipeline's).
        scorer: the QA scorer (``squad``, ``locomo`` or ``longmemeval``; see ``score_answer``).
        retention_threshold: token-recall threshold of the retention rule.
        score_adversarial_retrieval: also score retrieval of adversarial/abstention probes.
    """
    probe = outcome.probe
    ks = check_ks(ks)
    if n_relevant is None:
        n_relevant = getattr(outcome, "n_relevant", None)
    scores: dict[str, float] = {}
    retrieval = bool(probe.evidence) and (score_adversarial_retrieval or not expects_abstention(probe))
    if retrieval:
        scores.update(retrieval_scores(probe.evidence, turn_groups(outcome.hits), ks, session_of, n_relevant,
                                       verbatim_flags(outcome.hits)))
    scores.update(budget_scores(outcome, context_budgets, count, retrieval=retrieval, threshold=retention_threshold))
    scores.update(retention_scores(outcome, retention_threshold, context_retained))
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
