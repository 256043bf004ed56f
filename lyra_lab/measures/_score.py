"""All measures of one probe's recall, named as in the results schema (``Measure`` values).

``score_recall`` is what a cell calls for every probe × recaller, while the memory is as
the probe found it (a ranking is read deeper only then).  Each name says what it measures
(definitions in ``_retrieval`` and ``_budget``; they mean the same for a memory of raw
turns and one of digests):

* At every K in ``Scoring.ks``: ``evidence_recall@K`` (evidence turns retrieved directly, in
  a verbatim entry), ``coverage_recall@K`` (evidence turns covered by a retrieved entry, a
  digest covering every turn it folds), LongMemEval's ``recall_all@K`` / ``recall_any@K``,
  ``ndcg@K`` and LongMemEval's ``ndcg_any@K`` (ideal list = the relevant entries in memory),
  and ``mrr`` — when the probe has evidence and does not expect abstention (adversarial
  evidence points at the turn the trap was built from, not at an answer, so it is left out
  of retrieval scores by default).  With a turn → session mapping also ``session_recall@K``
  (evidence sessions among the top K's sessions), LongMemEval's session-level
  ``session_recall_any@K``, ``session_recall_all@K`` and ``session_ndcg_any@K`` (its
  turn-to-session rule, ``longmemeval_session_scores``) and lyra-lab's
  ``distinct_session_ndcg_any@K``.
* At every budget B in ``Scoring.budgets`` (tokens): ``answer_in_context@Btok``,
  ``evidence_recall@Btok``, ``coverage_recall@Btok``, ``context_tokens@Btok`` (see ``_budget``:
  every pipeline gets the same rendered-context size).
* ``retention`` (the answer anywhere in memory) and ``context_retention`` (in the context).
* ``context_tokens`` and ``recall_latency_s`` always.

``answer_scores`` scores an answer (``qa_em``, ``qa_f1``, ``answer_latency_s``,
``answer_cost_usd``); a judge's verdict is a ``judge`` row of its own.

Which one is fair across memory kinds: ``answer_in_context@Btok`` (same room for every
pipeline, and a summary scores only if its text kept the answer) and ``evidence_recall@K``.
``coverage_recall@K`` flatters summaries: over summaries alone it can reach 1.0 while the
summaries lost the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from lyra_lab.backends import Completion
from lyra_lab.corpus import Probe, Turn
from lyra_lab.matching import DEFAULT_RETENTION_THRESHOLD, answer_retained, expects_abstention, normalize_answer
from lyra_lab.measures._budget import budget_scores, check_budgets
from lyra_lab.measures._inputs import Recalled
from lyra_lab.measures._measure import Measure
from lyra_lab.measures._qa import score_answer
from lyra_lab.measures._retrieval import (
    RankedEvidence,
    SessionOf,
    first_appearances,
    longmemeval_session_scores,
    ndcg_any_discount,
    to_sessions,
    turn_groups,
    verbatim_flags,
)


def check_ks(ks: Iterable[int]) -> tuple[int, ...]:
    """``ks`` as a sorted tuple of distinct positive ints; raises ``ValueError`` otherwise."""
    out = tuple(sorted(set(ks)))
    if not out or any(not isinstance(k, int) or isinstance(k, bool) or k < 1 for k in out):
        raise ValueError(f"ks must be positive integers, got {ks!r}")
    return out


@dataclass(frozen=True)
class Scoring:
    """What every probe of a cell is scored at.

    Attributes:
        ks: cutoffs of the @K measures (the timed recall returns the largest).
        budgets: rendered-context budgets B of the @Btok measures (none: no equal-budget scores).
        adversarial_retrieval: also score retrieval of adversarial/abstention probes.
        retention_threshold: token-recall threshold of the retention rule.
    """

    ks: tuple[int, ...] = (1, 5, 10)
    budgets: tuple[int, ...] = ()
    adversarial_retrieval: bool = False
    retention_threshold: float = DEFAULT_RETENTION_THRESHOLD

    def __post_init__(self) -> None:
        object.__setattr__(self, "ks", check_ks(self.ks))
        object.__setattr__(self, "budgets", check_budgets(self.budgets))

    @property
    def k(self) -> int:
        """Hits the timed recall asks for: the largest K."""
        return self.ks[-1]

    def scores_retrieval(self, probe: Probe) -> bool:
        """Whether ``probe``'s retrieval is scored: it has evidence, and does not expect abstention unless asked."""
        return bool(probe.evidence) and (self.adversarial_retrieval or not expects_abstention(probe))


def retrieval_scores(evidence: Iterable[str], groups: list[tuple[str, ...]], ks: Iterable[int], *,
                     n_relevant: int | None = None, verbatim: list[bool] | None = None) -> dict[str, float]:
    """The turn-level @K retrieval measures of one ranking, per K, and ``mrr``.

    ``groups``: each hit's turn ids, best first; ``verbatim``: per hit, whether its entry holds its
    turns verbatim (None: all do).
    """
    ranked = RankedEvidence(tuple(evidence), groups, verbatim)
    scores: dict[str, float] = {}
    for k in check_ks(ks):
        scores[str(Measure.at("evidence_recall", k))] = ranked.recall(k)
        scores[str(Measure.at("coverage_recall", k))] = ranked.coverage(k)
        scores[str(Measure.at("recall_all", k))] = ranked.recall_all(k)
        scores[str(Measure.at("recall_any", k))] = ranked.recall_any(k)
        scores[str(Measure.at("ndcg", k))] = ranked.ndcg(k, n_relevant)
        scores[str(Measure.at("ndcg_any", k))] = ranked.ndcg(k, n_relevant, ndcg_any_discount)
    scores["mrr"] = ranked.mrr()
    return scores


def session_scores(outcome: Recalled, ks: Iterable[int], session_of: SessionOf) -> dict[str, float]:
    """The session-level @K measures of one probe's recall (see the module docstring)."""
    evidence = to_sessions(outcome.probe.evidence, session_of)
    hit_sessions = [to_sessions(group, session_of) for group in turn_groups(outcome.hits)]
    by_hit = RankedEvidence(evidence, hit_sessions)
    distinct = RankedEvidence(evidence, first_appearances(hit_sessions))
    n_relevant = outcome.memory.relevant_session_entries
    ks = check_ks(ks)
    ranked = _complete_sessions(outcome, ks[-1])  # long enough to widen every k
    scores: dict[str, float] = {}
    for k in ks:
        rule = longmemeval_session_scores(evidence, ranked, k, n_relevant if n_relevant is not None else 0)
        scores[str(Measure.at("session_recall", k))] = by_hit.coverage(k)
        scores[str(Measure.at("session_recall_any", k))] = rule.recall_any
        scores[str(Measure.at("session_recall_all", k))] = rule.recall_all
        if n_relevant is not None:  # its ideal list is the memory's entries of evidence sessions: unknown without
            scores[str(Measure.at("session_ndcg_any", k))] = rule.ndcg_any
        scores[str(Measure.at("distinct_session_ndcg_any", k))] = distinct.ndcg(k, len(evidence), ndcg_any_discount)
    return scores


def _complete_sessions(outcome: Recalled, k: int) -> list[frozenset[str]]:
    """The sessions of the complete ranking, read until its prefix holds ``k`` distinct sessions.

    The ranking is ``RankedEntries.entries(complete=True)``; reading also stops where the memory ends.
    """
    depth = max(4 * k, 16)
    while True:
        entries = outcome.ranking.entries(depth, complete=True)
        sessions = [frozenset(entry.session_ids) for entry in entries]
        if len(entries) < depth or len(set().union(*sessions)) >= k:
            return sessions
        depth *= 2


def score_recall(outcome: Recalled, scoring: Scoring, session_of: SessionOf | None = None) -> dict[str, float]:
    """Measure name → value for one probe's recall (see the module docstring).

    Args:
        outcome: the probe's recall, read while the memory is as the probe found it.
        scoring: the cutoffs, budgets and rules of the cell.
        session_of: turn id → session id, for the session-level measures (None: none of them).
    """
    probe = outcome.probe
    scores: dict[str, float] = {}
    retrieval = scoring.scores_retrieval(probe)
    if retrieval:
        scores.update(retrieval_scores(probe.evidence, turn_groups(outcome.hits), scoring.ks,
                                       n_relevant=outcome.memory.relevant_entries,
                                       verbatim=verbatim_flags(outcome.hits)))
        if session_of is not None:
            scores.update(session_scores(outcome, scoring.ks, session_of))
    scores.update(budget_scores(outcome, scoring.budgets, retrieval=retrieval,
                                threshold=scoring.retention_threshold))
    scores.update(retention_scores(outcome, scoring.retention_threshold))
    scores["context_tokens"] = float(outcome.context_tokens)
    scores["recall_latency_s"] = float(outcome.recall_latency_s)
    return scores


def retention_scores(outcome: Recalled, threshold: float = DEFAULT_RETENTION_THRESHOLD) -> dict[str, float]:
    """``retention`` (the answer anywhere in memory) and ``context_retention`` (in the rendered context).

    Empty when undefined: the probe expects abstention or has no answer.  ``retention`` is left out
    when the memory's answer recall was not computed.
    """
    probe = outcome.probe
    if expects_abstention(probe) or not normalize_answer(probe.answer):
        return {}
    scores = {"context_retention": float(answer_retained(probe.answer, outcome.context, threshold))}
    recall = outcome.memory.answer_recall
    if recall is not None:
        scores["retention"] = float(recall >= threshold)
    return scores


def answer_scores(probe: Probe, answer: Completion, scorer: str = "squad") -> dict[str, float]:
    """``qa_em``, ``qa_f1`` (under ``scorer``), ``answer_latency_s`` and ``answer_cost_usd`` of one answer."""
    return {**score_answer(probe, answer.text, scorer), "answer_latency_s": float(answer.latency_s),
            "answer_cost_usd": float(answer.usage.cost_usd)}


def session_map(turns: Iterable[Turn]) -> Mapping[str, str]:
    """Turn id → session id for ``score_recall``'s ``session_of`` (e.g. ``session_map(conv.turns())``)."""
    return {turn.id: turn.session_id for turn in turns}
