"""Retrieval metrics over ranked memory entries, with binary relevance, fair across memory kinds.

A ranked list is what a recaller returned, best first.  Each hit is reduced to
the source turn ids its entry covers (``Hit.entry.turn_ids``) and whether the
entry holds those turns *verbatim* (``MemoryEntry.kind`` in ``VERBATIM_KINDS``:
a raw turn, or a chunk of raw turns) or only condensed (a summary, digest,
gist or fact).  A raw turn is simply an entry covering one turn verbatim, so
every definition below means the same for a memory of raw turns and one of
digests.

Notation: ``E`` = the set of evidence turn ids; ``T_i`` = the turns the hit at
rank ``i`` covers; ``V_i = T_i`` if that entry is verbatim, else empty.  A hit
(an entry) is **relevant** when it covers some evidence turn (``T_i ∩ E ≠ ∅``);
``R`` = the number of relevant entries in the memory the probe was asked
against (``n_relevant``).

* ``evidence_recall_at(E, G, k, verbatim)`` = ``|E ∩ (V_1 ∪ … ∪ V_k)| / |E|``:
  the share of evidence turns retrieved *directly*, their own text in the top
  k.  A digest naming an evidence turn does not count: it may have lost the
  fact.  Fair across memory kinds.  Without ``verbatim`` flags every hit is
  taken as verbatim (raw-turn memory), which is LoCoMo's turn-level recall.
* ``coverage_recall_at(E, G, k)`` = ``|E ∩ (T_1 ∪ … ∪ T_k)| / |E|``: the share
  of evidence turns *covered* by the top k, a digest counting for every turn it
  folds.  Equal to evidence recall on raw turns; over digests it flatters
  summaries (a digest "covers" a fact its summary dropped).
* ``recall_all_at(E, G, k)`` = 1 if ``E ⊆ T_1 ∪ … ∪ T_k`` else 0, and
  ``any_recall_at(E, G, k)`` (``recall_any``) = 1 if some top-k hit is relevant
  else 0: LongMemEval's ``recall_all@k`` / ``recall_any@k``, by coverage (on
  raw turns exactly LongMemEval's turn-level figures).
* ``mrr(E, G)`` = ``1 / r`` for the rank ``r`` (1-based) of the first relevant hit
  in the list as returned (so it is MRR@len(list)), 0 if none.
* ``ndcg_at(E, G, k, n_relevant)`` = ``DCG@k / IDCG@k`` with
  ``DCG@k = Σ_{i≤k} rel_i / log2(i+1)`` and the ideal list holding
  ``min(k, R)`` relevant entries on top.  ``R`` counts relevant *memory
  entries*, not evidence turns: one digest covering all three evidence turns
  at rank 1 of a memory holding no other relevant entry scores 1.0, as do
  three evidence turns at ranks 1–3 of raw-turn memory.  Without
  ``n_relevant``, ``R = |E|`` (exact for raw-turn memory holding every
  evidence turn); ``R`` is never less than the relevant hits returned, so
  nDCG stays within [0, 1].  ``R = 0`` (no entry covers the evidence any
  more) scores 0, as in LongMemEval.  A memory keeping raw turns beside the
  digests folding them holds redundant relevant entries (the turn and its
  digest), and nDCG expects both on top: in the demo, nDCG@10 of raw+summary
  memories falls from ~0.85 to ~0.6 under this ideal list while their
  evidence recall is unchanged.  Read it beside ``evidence_recall``.
* ``ndcg_any_at(E, G, k, n_relevant)``: LongMemEval's ``ndcg_any@k`` — the
  same relevance and ideal list, with its discount: 1 at rank 1 and
  ``1 / log2(i)`` at rank ``i ≥ 2``.

``relevant_count(E, groups)`` counts ``R`` over a memory's entries.  Session-level
variants map turn ids to session ids first (``to_sessions``); ``session_recall_at``
applies the functions above to the hits' sessions.

LongMemEval's session level (``longmemeval_session_scores``, its
``evaluate_retrieval_turn2session``) is a rule of its own: each ranked entry stands for
its session(s), repeats kept; the cutoff widens from k until the prefix holds k distinct
sessions (or the ranking ends); ``recall_any``/``recall_all`` ask whether any/every
evidence session is in that prefix, and nDCG scores the prefix (an entry relevant when
its session is an evidence session, LongMemEval's discount) against an ideal list of every
memory entry of an evidence session.  ``distinct_session_ndcg_any`` is lyra-lab's older
variant: the distinct sessions of the hits in rank order against the evidence sessions.

All functions take any iterable of ids for ``evidence`` and raise
``ValueError`` when it is empty (the metric is undefined; callers skip such
probes) or when ``k < 1``.
"""

from __future__ import annotations

import functools
import math
from bisect import bisect_right
from typing import Callable, Iterable, Mapping, NamedTuple, Sequence

from lyra_lab.memory import VERBATIM_KINDS, MemoryEntry
from lyra_lab.recall import Hit

TurnGroups = Sequence[Iterable[str]]
SessionOf = Mapping[str, str] | Callable[[str], str]



def _evidence(evidence: Iterable[str]) -> frozenset[str]:
    ids = frozenset(evidence)
    if not ids:
        raise ValueError("evidence is empty: retrieval metrics are undefined for this probe")
    return ids


def _check_k(k: int) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")


@functools.lru_cache(maxsize=None)
def ndcg_discount(i: int) -> float:
    """NDCG's discount at rank ``i``: ``1 / log2(i + 1)``."""
    return 1.0 / math.log2(i + 1)


@functools.lru_cache(maxsize=None)
def ndcg_any_discount(i: int) -> float:
    """LongMemEval's ``ndcg_any`` discount at rank ``i``: 1 at rank 1, ``1 / log2(i)`` below."""
    return 1.0 if i == 1 else 1.0 / math.log2(i)


@functools.lru_cache(maxsize=1 << 12)
def ideal_dcg(m: int, discount: Callable[[int], float]) -> float:
    """DCG of ``m`` relevant hits on top: ``discount(1) + … + discount(m)`` (summed in that order)."""
    return sum(discount(i) for i in range(1, m + 1))


class RankedEvidence:
    """One ranked list's relevance to one probe's evidence, worked out once and read at any cutoff ``k``.

    Each metric of the module docstring at ``k`` (the functions below are this at
    one k): a probe's metrics at every K, or at every budget's whole entries,
    cost one pass over the list rather than one per cutoff.  ``k`` may be 0 here
    (nothing retrieved: recall 0.0); it is not checked.
    """

    def __init__(self, evidence: Iterable[str], groups: TurnGroups, verbatim: Sequence[bool] | None = None):
        self.evidence = _evidence(evidence)
        if verbatim is not None and len(verbatim) != len(groups):
            raise ValueError(f"verbatim has {len(verbatim)} flags for {len(groups)} hits")
        self.groups, self.verbatim = groups, verbatim
        self._first: dict[str, int] = {}  # evidence turn -> rank of the first hit covering it
        self._first_direct: dict[str, int] = {}  # ... of the first verbatim hit holding it
        self._scanned = 0  # hits looked at so far
        self._relevant: list[bool] | None = None
        self._n_relevant = 0
        self._ranks: list[int] = []  # 1-based ranks of the relevant hits

    def _found(self, firsts: dict[str, int], k: int) -> int:
        """How many evidence turns ``firsts`` has at ranks <= k, the ranking scanned that far."""
        if k > self._scanned:
            self._scan(k)
        if k >= self._scanned:  # every rank found so far is <= k (the usual case: cutoffs asked in order)
            return len(firsts)
        return sum(1 for rank in firsts.values() if rank <= k)

    def _scan(self, k: int) -> None:
        """Note the first ranks of the evidence turns the hits up to rank ``k`` cover."""
        for i in range(self._scanned, min(k, len(self.groups))):
            group = self.groups[i]
            if not self.evidence.isdisjoint(group):
                direct = self.verbatim is None or self.verbatim[i]
                for turn in self.evidence.intersection(group):
                    self._first.setdefault(turn, i + 1)
                    if direct:
                        self._first_direct.setdefault(turn, i + 1)
            self._scanned = i + 1

    @property
    def relevant(self) -> list[bool]:
        """Per hit, whether it covers an evidence turn."""
        if self._relevant is None:
            self._relevant = [not self.evidence.isdisjoint(group) for group in self.groups]
            self._n_relevant = sum(self._relevant)
            self._ranks = [rank for rank, relevant in enumerate(self._relevant, start=1) if relevant]
        return self._relevant

    def recall(self, k: int) -> float:
        """``evidence_recall_at``: evidence turns in a verbatim hit of the top k (every hit without flags)."""
        return self._found(self._first_direct, k) / len(self.evidence)

    def coverage(self, k: int) -> float:
        """``coverage_recall_at``: evidence turns covered by the top k."""
        return self._found(self._first, k) / len(self.evidence)

    def recall_all(self, k: int) -> float:
        """``recall_all_at``: 1.0 if the top k cover every evidence turn."""
        return 1.0 if self._found(self._first, k) == len(self.evidence) else 0.0

    def recall_any(self, k: int) -> float:
        """``any_recall_at``: 1.0 if a top-k hit is relevant."""
        return 1.0 if any(self.relevant[:k]) else 0.0

    def mrr(self) -> float:
        """``mrr``: reciprocal rank of the first relevant hit, 0.0 if none."""
        for rank, relevant in enumerate(self.relevant, start=1):
            if relevant:
                return 1.0 / rank
        return 0.0

    def ndcg(self, k: int, n_relevant: int | None = None,
             discount: Callable[[int], float] = ndcg_discount) -> float:
        """``ndcg_at`` (``ndcg_any_at`` with ``discount=ndcg_any_discount``) at ``k``."""
        if n_relevant is not None and (isinstance(n_relevant, bool) or not isinstance(n_relevant, int)
                                       or n_relevant < 0):
            raise ValueError(f"n_relevant must be an integer >= 0, got {n_relevant!r}")
        self.relevant  # noqa: B018 - works out the relevant ranks
        # The memory holds at least as many relevant entries as were returned (a raw turn and
        # the digest folding it both count), so the ideal list never has fewer: nDCG stays <= 1.
        ideal_count = max(len(self.evidence) if n_relevant is None else n_relevant, self._n_relevant)
        dcg = sum(discount(rank) for rank in self._ranks[:bisect_right(self._ranks, k)])  # the relevant of the top k
        idcg = ideal_dcg(min(k, ideal_count), discount)
        return dcg / idcg if idcg else 0.0


def coverage_recall_at(evidence: Iterable[str], ranked_turn_id_groups: TurnGroups, k: int) -> float:
    """Share of evidence turns covered by the top ``k`` hits (a digest covers every turn it folds)."""
    ev = _evidence(evidence)
    _check_k(k)
    return RankedEvidence(ev, ranked_turn_id_groups).coverage(k)


def evidence_recall_at(evidence: Iterable[str], ranked_turn_id_groups: TurnGroups, k: int,
                       verbatim: Sequence[bool] | None = None) -> float:
    """Share of evidence turns retrieved directly (in a verbatim entry) in the top ``k`` hits.

    ``verbatim[i]`` says whether hit ``i`` holds its turns verbatim
    (``verbatim_flags(hits)``); None takes every hit as verbatim (raw turns).
    """
    ev = _evidence(evidence)
    _check_k(k)
    return RankedEvidence(ev, ranked_turn_id_groups, verbatim).recall(k)


def recall_all_at(evidence: Iterable[str], ranked_turn_id_groups: TurnGroups, k: int) -> float:
    """1.0 if the top ``k`` hits cover every evidence turn, else 0.0 (LongMemEval's recall_all@k)."""
    ev = _evidence(evidence)
    _check_k(k)
    return RankedEvidence(ev, ranked_turn_id_groups).recall_all(k)


def any_recall_at(evidence: Iterable[str], ranked_turn_id_groups: TurnGroups, k: int) -> float:
    """1.0 if any of the top ``k`` hits covers an evidence turn, else 0.0 (LongMemEval's recall_any@k)."""
    ev = _evidence(evidence)
    _check_k(k)
    return RankedEvidence(ev, ranked_turn_id_groups[:k]).recall_any(k)


def mrr(evidence: Iterable[str], ranked_turn_id_groups: TurnGroups) -> float:
    """Reciprocal rank of the first hit covering an evidence turn (0.0 if none)."""
    return RankedEvidence(evidence, ranked_turn_id_groups).mrr()


def _ndcg(evidence: Iterable[str], groups: TurnGroups, k: int, n_relevant: int | None,
          discount: Callable[[int], float]) -> float:
    ev = _evidence(evidence)
    _check_k(k)
    return RankedEvidence(ev, groups).ndcg(k, n_relevant, discount)


def ndcg_at(
    evidence: Iterable[str],
    ranked_turn_id_groups: TurnGroups,
    k: int,
    n_relevant: int | None = None,
) -> float:
    """Binary-relevance nDCG@k over memory entries; see the module docstring for the ideal list."""
    return _ndcg(evidence, ranked_turn_id_groups, k, n_relevant, ndcg_discount)


def ndcg_any_at(
    evidence: Iterable[str],
    ranked_turn_id_groups: TurnGroups,
    k: int,
    n_relevant: int | None = None,
) -> float:
    """LongMemEval's ndcg_any@k: as ``ndcg_at`` with discount 1 at rank 1 and 1/log2(i) below."""
    return _ndcg(evidence, ranked_turn_id_groups, k, n_relevant, ndcg_any_discount)


def relevant_count(evidence: Iterable[str], turn_id_groups: Iterable[Iterable[str]]) -> int:
    """``R``: how many of a memory's entries (given as their turn-id groups) cover an evidence turn."""
    ev = _evidence(evidence)
    return sum(1 for group in turn_id_groups if not ev.isdisjoint(group))


def to_sessions(turn_ids: Iterable[str], session_of: SessionOf) -> frozenset[str]:
    """The session ids of ``turn_ids``; an unknown turn id raises ``KeyError`` naming it."""
    lookup = session_of if callable(session_of) else session_of.__getitem__
    out = set()
    for turn_id in turn_ids:
        try:
            out.add(lookup(turn_id))
        except KeyError:
            raise KeyError(f"turn id {turn_id!r} has no session in the turn→session mapping") from None
    return frozenset(out)


def session_recall_at(
    evidence: Iterable[str], ranked_turn_id_groups: TurnGroups, k: int, session_of: SessionOf
) -> float:
    """Share of evidence *sessions* covered by the sessions of the top ``k`` hits."""
    ev_sessions = to_sessions(_evidence(evidence), session_of)
    _check_k(k)
    groups = [to_sessions(group, session_of) for group in ranked_turn_id_groups[:k]]
    return evidence_recall_at(ev_sessions, groups, k)


def session_ranking(ranked_turn_id_groups: TurnGroups, session_of: SessionOf) -> list[tuple[str, ...]]:
    """The hits as a ranking of sessions: each hit's sessions, a session kept at its first appearance.

    This is LongMemEval's session-level view of a turn-level retrieval.

    >>> session_ranking([("a1",), ("a2",), ("b1",), ("a3", "c1")], lambda t: t[0])
    [('a',), ('b',), ('c',)]
    """
    return first_appearances([to_sessions(group, session_of) for group in ranked_turn_id_groups])


def first_appearances(session_groups: Iterable[frozenset[str]]) -> list[tuple[str, ...]]:
    """``session_ranking`` of hits given as their session sets.

    Each set less the sessions seen above it, sorted; empty ones dropped.
    """
    seen: set[str] = set()
    out = []
    for sessions in session_groups:
        fresh = tuple(sorted(sessions - seen))
        if fresh:
            seen.update(fresh)
            out.append(fresh)
    return out


class SessionScores(NamedTuple):
    """LongMemEval's session-level figures of one ranking at one k."""

    recall_any: float
    recall_all: float
    ndcg_any: float


def widened_cutoff(ranked_sessions: Sequence[frozenset[str]], k: int) -> int:
    """The smallest cutoff ``m >= k`` whose prefix holds ``k`` distinct sessions, else the ranking's length.

    >>> widened_cutoff([frozenset("a"), frozenset("a"), frozenset("b"), frozenset("c")], 2)
    3
    """
    _check_k(k)
    seen: set[str] = set()
    for m, sessions in enumerate(ranked_sessions, start=1):
        seen.update(sessions)
        if m >= k and len(seen) >= k:
            return m
    return len(ranked_sessions)


def longmemeval_session_scores(evidence_sessions: Iterable[str], ranked_sessions: Sequence[frozenset[str]],
                               k: int, n_relevant: int) -> SessionScores:
    """LongMemEval's ``evaluate_retrieval_turn2session`` at ``k`` (see the module docstring).

    Args:
        evidence_sessions: the sessions of the probe's evidence turns.
        ranked_sessions: each ranked entry's sessions, best first, repeats kept (a complete
            ranking: LongMemEval ranks every document of its corpus).
        k: the number of distinct sessions the cutoff widens to.
        n_relevant: memory entries of an evidence session (the ideal list).
    """
    ev = _evidence(evidence_sessions)
    m = widened_cutoff(ranked_sessions, k)
    prefix = ranked_sessions[:m]
    seen: set[str] = set().union(*prefix) if prefix else set()
    relevant = [rank for rank, sessions in enumerate(prefix, start=1) if not ev.isdisjoint(sessions)]
    dcg = sum(ndcg_any_discount(rank) for rank in relevant)
    idcg = ideal_dcg(min(m, max(n_relevant, len(relevant))), ndcg_any_discount)
    return SessionScores(1.0 if not ev.isdisjoint(seen) else 0.0, 1.0 if ev <= seen else 0.0,
                         dcg / idcg if idcg else 0.0)


def turn_groups(hits: Iterable[Hit]) -> list[tuple[str, ...]]:
    """The turn-id groups of recaller hits, in the order given (best first)."""
    return entry_groups(hit.entry for hit in hits)


def verbatim_flags(hits: Iterable[Hit]) -> list[bool]:
    """Per hit, whether its entry holds its turns verbatim (``VERBATIM_KINDS``), in the order given."""
    return entry_flags(hit.entry for hit in hits)


def entry_groups(entries: Iterable[MemoryEntry]) -> list[tuple[str, ...]]:
    """``turn_groups`` of ranked memory entries (a ranking's, without its hits)."""
    return [tuple(entry.turn_ids) for entry in entries]


def entry_flags(entries: Iterable[MemoryEntry]) -> list[bool]:
    """``verbatim_flags`` of ranked memory entries."""
    return [entry.kind in VERBATIM_KINDS for entry in entries]
