"""score_outcome's metric names and values on a hand-built ProbeOutcome; the retention rule."""

import math

import pytest

from lyra_lab.backends import Completion, Usage
from lyra_lab.corpus import Probe
from lyra_lab.measures import JudgeResult, score_outcome, session_map
from lyra_lab.matching import answer_retained, retention_scores
from lyra_lab.memory import MemoryEntry
from lyra_lab.recall import Hit
from lyra_lab.replay._types import ProbeOutcome


def entry(eid, turn_ids, kind="turn"):
    return MemoryEntry(id=eid, conversation_id="c1", kind=kind, text=eid, turn_ids=tuple(turn_ids))


def outcome(probe, hits, context="", memory_text="", memory_entries=0):
    hits = tuple(Hit(entry=e, score=1.0 - i / 10, rank=i) for i, e in enumerate(hits))
    return ProbeOutcome(probe=probe, hits=hits, context=context, context_tokens=42, recall_latency_s=0.25,
                        memory_text=memory_text, memory_entries=memory_entries)


PROBE = Probe(id="p1", conversation_id="c1", question="Where did Ana move?", answer="Lisbon, Portugal",
              evidence=("t2", "t4"), category=4)
HITS = [entry("turn:t1", ["t1"]), entry("digest:1", ["t2", "t3"], "digest"), entry("turn:t4", ["t4"])]
SESSIONS = {"t1": "s1", "t2": "s1", "t3": "s2", "t4": "s2"}


def test_score_outcome_retrieval_metrics_hand_computed():
    scores = score_outcome(outcome(PROBE, HITS, context="ana moved to lisbon portugal"), ks=[1, 2, 3],
                           session_of=SESSIONS)
    # evidence {t2, t4}; top1 {t1}: 0/2; top2 adds digest {t2,t3}: 1/2 covered; top3 adds t4: 2/2
    assert (scores["coverage_recall@1"], scores["coverage_recall@2"], scores["coverage_recall@3"]) == (0.0, 0.5, 1.0)
    # directly (verbatim entries only): the digest does not count; t4 at rank 3 -> 1/2 at k=3
    assert (scores["evidence_recall@2"], scores["evidence_recall@3"]) == (0.0, 0.5)
    assert (scores["recall_any@1"], scores["recall_any@2"]) == (0.0, 1.0)
    assert (scores["recall_all@2"], scores["recall_all@3"]) == (0.0, 1.0)
    # ndcg_any@3 (LongMemEval's discount 1, 1, 1/log2(3)): DCG = 1 + 1/log2(3); IDCG (R = |E| = 2) = 1 + 1 = 2
    assert scores["ndcg_any@3"] == pytest.approx((1 + 1 / math.log2(3)) / 2)
    # first relevant = the digest at rank 2 -> 1/2
    assert scores["mrr"] == 0.5
    # ndcg@3: DCG = 1/log2(3) + 1/log2(4) = 0.63093 + 0.5 = 1.13093; IDCG = 1 + 0.63093 -> 0.69342
    assert scores["ndcg@3"] == pytest.approx((1 / math.log2(3) + 0.5) / (1 + 1 / math.log2(3)))
    # sessions: evidence sessions {s1, s2}; top1 t1 -> {s1}: 1/2
    assert scores["session_recall@1"] == 0.5
    assert scores["context_tokens"] == 42.0 and scores["recall_latency_s"] == 0.25
    # context holds "lisbon portugal" -> retained; no memory recorded -> no "retention"
    assert scores["context_retention"] == 1.0 and "retention" not in scores
    assert "qa_f1" not in scores and "judge" not in scores


def test_score_outcome_with_answer_and_judge():
    completion = Completion(text="Lisbon", usage=Usage(10, 2, cost_usd=0.003, calls=1), latency_s=1.5,
                            backend="fake", model="m")
    judge = JudgeResult(score=1, raw="CORRECT", parsed=True, prompt="correct_wrong_v1")
    scores = score_outcome(outcome(PROBE, HITS, memory_text="Ana moved to Porto", memory_entries=3), ks=[5],
                           answer=completion, judge=judge)
    # "lisbon" vs "lisbon portugal": P = 1/1, R = 1/2 -> F1 = 2/3; EM 0
    assert scores["qa_em"] == 0.0 and scores["qa_f1"] == pytest.approx(2 / 3)
    assert scores["answer_latency_s"] == 1.5 and scores["answer_cost_usd"] == 0.003
    assert scores["judge"] == 1.0
    # memory "ana moved to porto" holds neither lisbon nor portugal -> 0
    assert scores["retention"] == 0.0
    assert "session_recall@5" not in scores  # no mapping given


def test_score_outcome_skips_retrieval_without_evidence_and_for_adversarial():
    no_ev = Probe(id="p2", conversation_id="c1", question="q", answer="a b")
    assert "mrr" not in score_outcome(outcome(no_ev, HITS), ks=[1])
    adv = Probe(id="p3", conversation_id="c1", question="q", answer="trap", evidence=("t2",), adversarial=True)
    scores = score_outcome(outcome(adv, HITS), ks=[2], answer="Not mentioned.")
    assert "coverage_recall@2" not in scores and "evidence_recall@2" not in scores and "retention" not in scores
    assert scores["qa_em"] == 1.0
    assert score_outcome(outcome(adv, HITS), ks=[2], score_adversarial_retrieval=True)["coverage_recall@2"] == 1.0


def test_score_outcome_rejects_bad_ks():
    with pytest.raises(ValueError, match="ks"):
        score_outcome(outcome(PROBE, HITS), ks=[0])


def test_retention_rule():
    # whole-phrase substring after normalization
    assert answer_retained("7 May 2023", "Caroline went on 7 May, 2023.")
    # not a whole-word phrase: "may 20" inside "may 2023" does not count as phrase; tokens {7? no}:
    # answer "May 20" tokens {may, 20}; text tokens {may, 2023}: 1/2 < 0.8 -> not retained
    assert not answer_retained("May 20", "on May 2023")
    # reordered: tokens {7, may, 2023} all present -> 3/3 >= 0.8
    assert answer_retained("7 May 2023", "on May 7, 2023")
    # 4 of 5 tokens = 0.8 -> retained at the default threshold, not at 0.9
    text = "pottery painting hiking camping"
    assert answer_retained("pottery, painting, hiking, camping, swimming", text)
    assert not answer_retained("pottery, painting, hiking, camping, swimming", text, threshold=0.9)
    with pytest.raises(ValueError):
        answer_retained("the", "anything")


def test_retention_scores_memory_recorded_but_empty_counts_as_lost():
    o = outcome(PROBE, [], context="", memory_text="", memory_entries=2)
    assert retention_scores(o) == {"context_retention": 0.0, "retention": 0.0}


def test_session_map():
    from datetime import datetime, timezone

    from lyra_lab.corpus import Turn

    turns = [Turn(id=f"t{i}", conversation_id="c", session_id=f"s{i % 2}", role="user", text="x",
                  timestamp=datetime(2024, 1, 1, tzinfo=timezone.utc)) for i in range(3)]
    assert session_map(turns) == {"t0": "s0", "t1": "s1", "t2": "s0"}
