"""Properties of the retrieval metrics over random ranked lists of turn-id groups."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab.measures import any_recall_at, evidence_recall_at, mrr, ndcg_at

TURNS = [f"t{i}" for i in range(12)]
groups = st.lists(st.lists(st.sampled_from(TURNS), min_size=1, max_size=4).map(tuple), max_size=10)
evidence = st.lists(st.sampled_from(TURNS), min_size=1, max_size=5)


@settings(max_examples=200, deadline=None)
@given(evidence, groups, st.integers(1, 12))
def test_bounds_and_monotonicity(ev, ranked, k):
    r, r_next = evidence_recall_at(ev, ranked, k), evidence_recall_at(ev, ranked, k + 1)
    assert 0.0 <= r <= r_next <= 1.0  # more hits never lose evidence
    assert 0.0 <= ndcg_at(ev, ranked, k) <= 1.0 + 1e-12
    # any-recall is 1 exactly when some evidence is covered
    assert any_recall_at(ev, ranked, k) == (1.0 if r > 0 else 0.0)
    m = mrr(ev, ranked)
    assert m == 0.0 or any_recall_at(ev, ranked, round(1 / m)) == 1.0
    if m > 0 and round(1 / m) > 1:
        assert any_recall_at(ev, ranked, round(1 / m) - 1) == 0.0  # nothing relevant before the first hit


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(TURNS), min_size=1, max_size=5, unique=True), st.permutations(TURNS))
def test_raw_turn_lists_with_all_evidence_on_top_are_ideal(ev, order):
    # raw-turn memory: evidence turns first, then the rest -> recall@|E| = 1, mrr = 1, ndcg = 1
    ranked = [(t,) for t in ev] + [(t,) for t in order if t not in ev]
    k = len(ev)
    assert evidence_recall_at(ev, ranked, k) == 1.0
    assert mrr(ev, ranked) == 1.0
    assert abs(ndcg_at(ev, ranked, k) - 1.0) < 1e-12
    # the reversed list is never better
    assert ndcg_at(ev, ranked[::-1], k) <= ndcg_at(ev, ranked, k) + 1e-12


def _ndcg(evidence, groups, k, n_rel, discount):
    ranks = [i for i, g in enumerate(groups, start=1) if evidence & set(g)]  # the relevant hits' ranks
    ideal_list = range(1, min(k, max(len(evidence) if n_rel is None else n_rel, len(ranks))) + 1)
    gain = sum(map(discount, [r for r in ranks if r <= k]))  # DCG@k, ranks in order
    best = sum(map(discount, ideal_list))  # IDCG@k
    return gain / best if best else 0.0


def _plain(i):
    return 1.0 / math.log2(i + 1)


def _any(i):
    return 1.0 if i == 1 else 1.0 / math.log2(i)


def _reference_scores(ev, ranked, ks, verbatim, n_relevant):
    """The turn-level @K metrics straight from the module docstring's formulas, one cutoff at a time."""
    E = set(ev)
    out = {}
    for k in ks:
        covered = set().union(*ranked[:k])
        direct = set().union(*(g for g, flag in zip(ranked[:k], verbatim[:k]) if flag))
        out[f"evidence_recall@{k}"] = len(E & direct) / len(E)
        out[f"coverage_recall@{k}"] = len(E & covered) / len(E)
        out[f"recall_all@{k}"] = 1.0 if E <= covered else 0.0
        out[f"recall_any@{k}"] = 1.0 if any(E & set(g) for g in ranked[:k]) else 0.0
        out[f"ndcg@{k}"] = _ndcg(E, ranked, k, n_relevant, _plain)
        out[f"ndcg_any@{k}"] = _ndcg(E, ranked, k, n_relevant, _any)
    ranks = [i for i, g in enumerate(ranked, start=1) if E & set(g)]
    out["mrr"] = 1.0 / ranks[0] if ranks else 0.0
    return out


def _distinct_sessions(ranked, session_of):
    """Each hit's sessions not seen at a better rank, hits adding none dropped."""
    seen: set = set()
    out = []
    for group in ranked:
        fresh = tuple(sorted({session_of[t] for t in group} - seen))
        if fresh:
            seen.update(fresh)
            out.append(fresh)
    return out


@settings(max_examples=300, deadline=None)
@given(evidence, groups, st.lists(st.integers(1, 12), min_size=1, max_size=4), st.data(),
       st.one_of(st.none(), st.integers(0, 8)))
def test_every_cutoff_in_one_pass_equals_each_cutoff_from_the_formulas(ev, ranked, ks, data, n_relevant):
    from lyra_lab.measures import retrieval_scores

    verbatim = data.draw(st.lists(st.booleans(), min_size=len(ranked), max_size=len(ranked)))
    got = retrieval_scores(ev, ranked, ks, n_relevant=n_relevant, verbatim=verbatim)
    assert got == _reference_scores(ev, ranked, sorted(set(ks)), verbatim, n_relevant)


@settings(max_examples=300, deadline=None)
@given(evidence, groups, st.lists(st.integers(1, 12), min_size=1, max_size=4))
def test_session_recall_and_the_distinct_session_ndcg_follow_their_formulas(ev, ranked, ks):
    from lyra_lab.corpus import Probe
    from lyra_lab.measures import session_scores
    from lyra_lab.memory import MemoryEntry
    from tests.helpers.recalled import recalled

    session_of = {t: f"s{int(t[1:]) % 4}" for t in TURNS}
    entries = [MemoryEntry(id=f"e{i}", conversation_id="c", kind="chunk", text="x", turn_ids=g,
                           session_ids=tuple(sorted({session_of[t] for t in g}))) for i, g in enumerate(ranked)]
    probe = Probe(id="q", conversation_id="c", question="?", answer="x", evidence=tuple(ev))
    got = session_scores(recalled(probe, entries, k=len(entries)), ks, session_of)
    sessions = {session_of[t] for t in ev}
    hit_sessions = [{session_of[t] for t in g} for g in ranked]
    for k in set(ks):
        assert got[f"session_recall@{k}"] == len(sessions & set().union(*hit_sessions[:k])) / len(sessions)
        want = _ndcg(sessions, _distinct_sessions(ranked, session_of), k, len(sessions), _any)
        assert got[f"distinct_session_ndcg_any@{k}"] == want


@settings(max_examples=300, deadline=None)
@given(evidence, groups, st.lists(st.integers(0, 12), min_size=1, max_size=8), st.data())
def test_one_ranked_evidence_read_at_cutoffs_in_any_order_equals_the_definition(ev, ranked, cutoffs, data):
    # The scan goes only as deep as asked; a later, shallower cutoff must not count what lies deeper.
    from lyra_lab.measures._retrieval import RankedEvidence

    verbatim = data.draw(st.lists(st.booleans(), min_size=len(ranked), max_size=len(ranked)))
    reader, need = RankedEvidence(ev, ranked, verbatim), set(ev)
    for k in cutoffs:
        covered = need & set().union(*ranked[:k])
        direct = need & set().union(*[g for g, flag in zip(ranked[:k], verbatim) if flag])
        assert reader.coverage(k) == len(covered) / len(need)
        assert reader.recall(k) == len(direct) / len(need)
        assert reader.recall_all(k) == (1.0 if covered == need else 0.0)
