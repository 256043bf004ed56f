"""Retrieval metrics over ranked lists of turn-id groups, with binary relevance.

A ranked list is what a recaller returned, best first, each hit reduced to the
source turn ids it covers (``Hit.entry.turn_ids``).  A raw-turn hit covers one
turn; a digest covers every turn folded into it, so a digest that names an
evidence turn counts as retrieving that turn.  A hit that covers no evidence
turn is irrelevant.

Definitions (``E`` = the set of evidence turn ids, ``G_1..G_n`` the groups):

* ``evidence_recall_at(E, G, k)`` = ``|E ∩ (G_1 ∪ … ∪ G_k)| / |E|``: the share of
  evidence turns covered by the top k hits (LoCoMo's turn-level recall).
* ``any_recall_at(E, G, k)`` = 1 if some top-k hit covers some evidence turn, else 0.
* ``mrr(E, G)`` = ``1 / r`` for the rank ``r`` (1-based) of the first relevant hit
  in the list as returned (so it is MRR@len(list)), 0 if none.
* ``ndcg_at(E, G, k)`` = ``DCG@k / IDCG@k`` with ``DCG@k = Σ_{i≤k} rel_i / log2(i+1)``
  and the ideal list holding ``min(k, R)`` relevant hits on top, where ``R`` is the
  number of relevant entries in the memory: ``n_relevant`` if given, else ``|E|``
  (exact for raw-turn memory), and never less than the number of relevant hits
  in the returned list (a raw turn and a digest folding it are two relevant
  entries), so nDCG stays within [0, 1].  Over digest memories pass
  ``n_relevant`` explicitly: with the default, one digest covering three
  evidence turns scores below 1.

Session-level variants map turn ids to session ids first (``to_sessions``) and
apply the same functions; ``session_recall_at`` is the common case.

All functions take any iterable of ids for ``evidence`` and raise
``ValueError`` when it is empty (the metric is undefined; callers skip such
probes) or when ``k < 1``.
"""

from __future__ import annotations

import math
from typing import Callable, Iterable, Mapping, Sequence

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


def _relevance(evidence: frozenset[str], groups: TurnGroups) -> list[bool]:
    return [not evidence.isdisjoint(group) for group in groups]


def evidence_recall_at(evidence: Iterable[str], ranked_turn_id_groups: TurnGroups, k: int) -> float:
    """Share of evidence turns covered by the top ``k`` hits."""
    ev = _evidence(evidence)
    _check_k(k)
    covered: set[str] = set()
    for group in ranked_turn_id_groups[:k]:
        covered.update(group)
    return len(ev & covered) / len(ev)


def any_recall_at(evidence: Iterable[str], ranked_turn_id_groups: TurnGroups, k: int) -> float:
    """1.0 if any of the top ``k`` hits covers an evidence turn, else 0.0."""
    ev = _evidence(evidence)
    _check_k(k)
    return 1.0 if any(_relevance(ev, ranked_turn_id_groups[:k])) else 0.0


def mrr(evidence: Iterable[str], ranked_turn_id_groups: TurnGroups) -> float:
    """Reciprocal rank of the first hit covering an evidence turn (0.0 if none)."""
    ev = _evidence(evidence)
    for rank, relevant in enumerate(_relevance(ev, ranked_turn_id_groups), start=1):
        if relevant:
            return 1.0 / rank
    return 0.0


def ndcg_at(
    evidence: Iterable[str],
    ranked_turn_id_groups: TurnGroups,
    k: int,
    n_relevant: int | None = None,
) -> float:
    """Binary-relevance nDCG@k; see the module docstring for the ideal list."""
    ev = _evidence(evidence)
    _check_k(k)
    if n_relevant is not None and n_relevant < 1:
        raise ValueError(f"n_relevant must be >= 1, got {n_relevant!r}")
    all_rels = _relevance(ev, ranked_turn_id_groups)
    # The memory holds at least as many relevant entries as were returned (a raw turn and
    # the digest folding it both count), so the ideal list never has fewer: nDCG stays <= 1.
    ideal_count = max(len(ev) if n_relevant is None else n_relevant, sum(all_rels))
    rels = all_rels[:k]
    dcg = sum(1.0 / math.log2(i + 1) for i, rel in enumerate(rels, start=1) if rel)
    idcg = sum(1.0 / math.log2(i + 1) for i in range(1, min(k, ideal_count) + 1))
    return dcg / idcg


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


def turn_groups(hits: Iterable[object]) -> list[tuple[str, ...]]:
    """The turn-id groups of recaller hits, in the order given (best first)."""
    return [tuple(hit.entry.turn_ids) for hit in hits]  # type: ignore[attr-defined]
