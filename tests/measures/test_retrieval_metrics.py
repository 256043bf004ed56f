"""Retrieval metrics against hand-computed cases (arithmetic in the comments)."""

import math

import pytest

from lyra_lab.measures import (
    any_recall_at,
    coverage_recall_at,
    evidence_recall_at,
    mrr,
    ndcg_any_at,
    ndcg_at,
    recall_all_at,
    relevant_count,
    session_recall_at,
    to_sessions,
    verbatim_flags,
)

# A memory mixing raw turns and digests; each hit is the tuple of turn ids it covers.
RANKED = [
    ("t9",),                 # rank 1: irrelevant raw turn
    ("t1", "t2", "t3"),      # rank 2: a digest covering evidence t1 and t3 (t2 is not evidence)
    ("t7",),                 # rank 3: irrelevant
    ("t5",),                 # rank 4: evidence t5
]
EVIDENCE = ["t1", "t3", "t5", "t8"]  # t8 is never retrieved


def test_recall_counts_every_turn_a_digest_covers():
    # top1 covers {t9}: 0 of 4 evidence turns -> 0
    assert evidence_recall_at(EVIDENCE, RANKED, 1) == 0.0
    # top2 covers {t9,t1,t2,t3}: evidence t1,t3 -> 2/4
    assert evidence_recall_at(EVIDENCE, RANKED, 2) == 0.5
    # top3 adds t7: still 2/4
    assert evidence_recall_at(EVIDENCE, RANKED, 3) == 0.5
    # top4 adds t5: 3/4; t8 never found
    assert evidence_recall_at(EVIDENCE, RANKED, 4) == 0.75
    # k beyond the list: same as the whole list
    assert evidence_recall_at(EVIDENCE, RANKED, 10) == 0.75


def test_duplicate_evidence_ids_count_once():
    # {t1, t5}: top4 covers both -> 2/2
    assert evidence_recall_at(["t1", "t1", "t5"], RANKED, 4) == 1.0


def test_any_recall():
    assert any_recall_at(EVIDENCE, RANKED, 1) == 0.0
    assert any_recall_at(EVIDENCE, RANKED, 2) == 1.0
    assert any_recall_at(["t8"], RANKED, 4) == 0.0


def test_mrr_first_relevant_at_rank_3_is_one_third():
    ranked = [("a",), ("b",), ("e1",), ("e2",)]
    assert mrr(["e1", "e2"], ranked) == pytest.approx(1 / 3)
    # a digest at rank 2 covering evidence -> 1/2
    assert mrr(EVIDENCE, RANKED) == 0.5
    assert mrr(["zz"], RANKED) == 0.0
    assert mrr(["a"], ranked) == 1.0


def test_ndcg_two_relevant_at_ranks_1_and_3_over_two_ideal():
    ranked = [("e1",), ("x",), ("e2",), ("y",)]
    # DCG = 1/log2(2) + 1/log2(4) = 1 + 0.5 = 1.5; IDCG (2 relevant on top) = 1 + 1/log2(3) = 1.6309...
    expected = 1.5 / (1 + 1 / math.log2(3))
    assert ndcg_at(["e1", "e2"], ranked, 4) == pytest.approx(expected)
    assert ndcg_at(["e1", "e2"], ranked, 4) == pytest.approx(0.91972, abs=1e-5)


def test_ndcg_cutoff_and_ideal_capped_by_k():
    ranked = [("e1",), ("x",), ("e2",)]
    # k=2: DCG = 1 (e2 at rank 3 is cut); IDCG = min(2, 2 relevant) = 1 + 1/log2(3)
    assert ndcg_at(["e1", "e2"], ranked, 2) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    # k=1 with three evidence turns: IDCG has min(1, 3) = 1 term = 1; DCG = 1 -> 1.0
    assert ndcg_at(["e1", "e2", "e3"], ranked, 1) == 1.0
    # nothing relevant -> 0
    assert ndcg_at(["zz"], ranked, 3) == 0.0


def test_ndcg_digest_with_default_and_explicit_ideal():
    ranked = [("e1", "e2", "e3")]  # one digest covering all three evidence turns
    # default ideal = 3 relevant: IDCG = 1 + 1/log2(3) + 1/log2(4) = 1 + 0.63093 + 0.5 = 2.13093; DCG = 1
    assert ndcg_at(["e1", "e2", "e3"], ranked, 3) == pytest.approx(1 / 2.130930, abs=1e-6)
    # with n_relevant=1 (one entry in memory covers the evidence) the digest at rank 1 is ideal
    assert ndcg_at(["e1", "e2", "e3"], ranked, 3, n_relevant=1) == 1.0


def test_ndcg_ideal_grows_with_relevant_hits_returned():
    # raw turn t1 and a digest folding it are two relevant entries for evidence {t1}:
    # DCG = 1 + 1/log2(3); R = max(|E| = 1, 2 relevant returned) = 2 -> IDCG is the same -> 1.0
    assert ndcg_at(["t1"], [("t1",), ("t1", "t2")], 2) == pytest.approx(1.0)
    # the same two with an irrelevant hit between: DCG = 1 + 1/log2(4) = 1.5; IDCG = 1.63093 -> 0.91972
    assert ndcg_at(["t1"], [("t1",), ("x",), ("t1", "t2")], 3) == pytest.approx(0.91972, abs=1e-5)


def test_session_recall_maps_turns_to_sessions():
    session_of = {"t1": "s1", "t2": "s1", "t3": "s2", "t5": "s3", "t7": "s3", "t8": "s4", "t9": "s4"}
    # evidence sessions {s1 (t1), s2 (t3), s3 (t5), s4 (t8)}
    # top1 = t9 -> {s4}: 1/4 (the right session, the wrong turn)
    assert session_recall_at(EVIDENCE, RANKED, 1, session_of) == 0.25
    # top2 adds the digest -> {s4, s1, s2}: 3/4
    assert session_recall_at(EVIDENCE, RANKED, 2, session_of) == 0.75
    # callables work as mappings
    assert session_recall_at(EVIDENCE, RANKED, 4, session_of.__getitem__) == 1.0
    with pytest.raises(KeyError, match="t404"):
        to_sessions(["t404"], session_of)


@pytest.mark.parametrize("fn", [evidence_recall_at, any_recall_at, ndcg_at])
def test_bad_input_raises(fn):
    with pytest.raises(ValueError, match="evidence is empty"):
        fn([], RANKED, 3)
    with pytest.raises(ValueError, match="k must be"):
        fn(EVIDENCE, RANKED, 0)
    with pytest.raises(ValueError, match="evidence is empty"):
        mrr([], RANKED)


# --- fair across memory kinds: nDCG's ideal list counts relevant memory entries -------------------

EV3 = ["e1", "e2", "e3"]


def test_ndcg_perfect_digest_hit_scores_one():
    # summaries-only memory: one digest covers all three evidence turns and nothing else covers them (R = 1);
    # it is at rank 1 -> DCG = 1, IDCG = 1 -> 1.0 (with R = |E| = 3 it was 1 / 2.13093 = 0.469)
    ranked = [("e1", "e2", "e3"), ("x",), ("y",)]
    assert relevant_count(EV3, [("e1", "e2", "e3"), ("x",), ("y",), ("z",)]) == 1
    assert ndcg_at(EV3, ranked, 5, n_relevant=1) == 1.0
    assert ndcg_any_at(EV3, ranked, 5, n_relevant=1) == 1.0


def test_ndcg_perfect_turn_hit_still_scores_one():
    # raw-turn memory: the three evidence turns at ranks 1-3 (R = 3): DCG = IDCG = 1 + 1/log2(3) + 1/2
    ranked = [("e1",), ("e2",), ("e3",), ("x",)]
    assert relevant_count(EV3, ranked) == 3
    assert ndcg_at(EV3, ranked, 5, n_relevant=3) == pytest.approx(1.0)
    assert ndcg_at(EV3, ranked, 5) == pytest.approx(1.0)  # the default R = |E| is exact here
    assert ndcg_any_at(EV3, ranked, 5, n_relevant=3) == pytest.approx(1.0)


def test_ndcg_mixed_memory_hand_computed():
    # raw turns kept beside a digest covering them: R = 4 relevant entries (e1, e2, e3, the digest)
    memory = [("e1",), ("e2",), ("e3",), ("e1", "e2", "e3"), ("x",)]
    assert relevant_count(EV3, memory) == 4
    ranked = [("e1",), ("x",), ("e1", "e2", "e3"), ("y",), ("z",)]
    # DCG@5 = 1/log2(2) + 1/log2(4) = 1.5
    # IDCG@5 = 1 + 1/log2(3) + 1/log2(4) + 1/log2(5) = 1 + 0.63093 + 0.5 + 0.43068 = 2.56161 -> 0.58557
    assert ndcg_at(EV3, ranked, 5, n_relevant=4) == pytest.approx(0.58557, abs=1e-5)
    # LongMemEval's discount (1, 1, 1/log2(3), 1/log2(4), 1/log2(5)):
    # DCG = 1 + 1/log2(3) = 1.63093; IDCG = 1 + 1 + 0.63093 + 0.5 = 3.13093 -> 0.52091
    assert ndcg_any_at(EV3, ranked, 5, n_relevant=4) == pytest.approx(0.52091, abs=1e-5)


def test_ndcg_is_zero_when_no_entry_covers_the_evidence_any_more():
    assert ndcg_at(EV3, [("x",)], 3, n_relevant=0) == 0.0
    with pytest.raises(ValueError, match="n_relevant"):
        ndcg_at(EV3, [("x",)], 3, n_relevant=-1)


def test_evidence_recall_counts_verbatim_entries_only_and_coverage_counts_digests():
    # RANKED: t9 turn, a digest {t1, t2, t3}, t7 turn, t5 turn; evidence {t1, t3, t5, t8}
    verbatim = [True, False, True, True]
    # directly: only t5 (rank 4) -> 1/4 at k=4; coverage: t1, t3, t5 -> 3/4
    assert evidence_recall_at(EVIDENCE, RANKED, 4, verbatim) == 0.25
    assert evidence_recall_at(EVIDENCE, RANKED, 3, verbatim) == 0.0
    assert coverage_recall_at(EVIDENCE, RANKED, 4) == 0.75
    # without flags every hit is taken as verbatim (raw-turn memory): the old figure
    assert evidence_recall_at(EVIDENCE, RANKED, 4) == 0.75
    with pytest.raises(ValueError, match="flags"):
        evidence_recall_at(EVIDENCE, RANKED, 4, [True])


def test_recall_all_needs_every_evidence_turn():
    assert recall_all_at(["t1", "t3"], RANKED, 1) == 0.0
    assert recall_all_at(["t1", "t3"], RANKED, 2) == 1.0  # the digest covers both
    assert recall_all_at(EVIDENCE, RANKED, 10) == 0.0  # t8 never retrieved


def test_verbatim_kinds_are_turns_and_chunks():
    from lyra_lab.memory import MemoryEntry
    from lyra_lab.recall import Hit

    hits = [Hit(entry=MemoryEntry(id=k, conversation_id="c", kind=k, text="x", turn_ids=("t",)), score=0.0, rank=i)
            for i, k in enumerate(["turn", "chunk", "summary", "digest", "gist", "fact"])]
    assert verbatim_flags(hits) == [True, True, False, False, False, False]


def test_longmemeval_session_level_metrics_by_hand():
    from lyra_lab.measures import longmemeval_session_scores, retrieval_scores

    # entries a1, a2, b1, c1 in rank order; evidence in sessions a and c; 4 entries of those sessions
    ranked = [frozenset("a"), frozenset("a"), frozenset("b"), frozenset("c")]
    # k=2 widens to 3 entries (a, a, b hold 2 distinct sessions): c missing
    at2 = longmemeval_session_scores({"a", "c"}, ranked, 2, n_relevant=3)
    assert (at2.recall_any, at2.recall_all) == (1.0, 0.0)
    # nDCG over [a, a, b], relevant [1, 1, 0], discount 1, 1/log2(2); ideal min(3, 3) relevant on top
    assert at2.ndcg_any == pytest.approx(2 / (1 + 1 + 1 / math.log2(3)), abs=1e-9)
    at3 = longmemeval_session_scores({"a", "c"}, ranked, 3, n_relevant=3)  # widened to all 4
    assert at3.recall_all == 1.0
    assert at3.ndcg_any == pytest.approx((2 + 1 / math.log2(4)) / (2 + 1 / math.log2(3)), abs=1e-9)
    # the turn-level figure at 4 differs: both evidence turns are in the top 4
    scores = retrieval_scores(("a2", "c1"), [("a1",), ("a2",), ("b1",), ("c1",)], [2, 4])
    assert scores["recall_all@4"] == 1.0 and scores["recall_all@2"] == 0.0
