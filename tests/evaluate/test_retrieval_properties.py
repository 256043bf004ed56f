"""Properties of the retrieval metrics over random ranked lists of turn-id groups."""

from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab.evaluate import any_recall_at, evidence_recall_at, mrr, ndcg_at

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
