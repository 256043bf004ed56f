"""score_recall's metric names and values on a hand-built recall; answer scores; the retention rule."""

import math

import pytest

from lyra_lab.backends import Completion, Usage
from lyra_lab.corpus import Probe
from lyra_lab.measures import Scoring, answer_scores, retention_scores, score_recall, session_map
from lyra_lab.matching import answer_retained
from lyra_lab.memory import MemoryEntry
from lyra_lab.replay import MemoryState
from tests.helpers.recalled import recalled


def entry(eid, turn_ids, kind="turn", sessions=()):
    return MemoryEntry(id=eid, conversation_id="c1", kind=kind, text=eid, turn_ids=tuple(turn_ids),
                       session_ids=tuple(sessions))


def outcome(probe, hits, context="", answer_recall=None, memory_entries=0):
    memory = MemoryState(memory_entries, 0, answer_recall=answer_recall)
    return recalled(probe, hits, k=len(hits), context=context, context_tokens=42, recall_latency_s=0.25,
                    memory=memory)


PROBE = Probe(id="p1", conversation_id="c1", question="Where did Ana move?", answer="Lisbon, Portugal",
              evidence=("t2", "t4"), category=4)
HITS = [entry("turn:t1", ["t1"], sessions=["s1"]), entry("digest:1", ["t2", "t3"], "digest", ["s1", "s2"]),
        entry("turn:t4", ["t4"], sessions=["s2"])]
SESSIONS = {"t1": "s1", "t2": "s1", "t3": "s2", "t4": "s2"}


def test_score_recall_retrieval_metrics_hand_computed():
    scores = score_recall(outcome(PROBE, HITS, context="ana moved to lisbon portugal"), Scoring(ks=(1, 2, 3)),
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


def test_answer_scores_and_retention_from_the_memory():
    completion = Completion(text="Lisbon", usage=Usage(10, 2, cost_usd=0.003, calls=1), latency_s=1.5,
                            backend="fake", model="m")
    scores = answer_scores(PROBE, completion)
    # "lisbon" vs "lisbon portugal": P = 1/1, R = 1/2 -> F1 = 2/3; EM 0
    assert scores["qa_em"] == 0.0 and scores["qa_f1"] == pytest.approx(2 / 3)
    assert scores["answer_latency_s"] == 1.5 and scores["answer_cost_usd"] == 0.003
    scores = score_recall(outcome(PROBE, HITS, answer_recall=0.0, memory_entries=3), Scoring(ks=(5,)))
    # a memory holding neither lisbon nor portugal (answer recall 0) -> 0
    assert scores["retention"] == 0.0
    assert "session_recall@5" not in scores  # no mapping given


def test_score_recall_skips_retrieval_without_evidence_and_for_adversarial():
    no_ev = Probe(id="p2", conversation_id="c1", question="q", answer="a b")
    assert "mrr" not in score_recall(outcome(no_ev, HITS), Scoring(ks=(1,)))
    adv = Probe(id="p3", conversation_id="c1", question="q", answer="trap", evidence=("t2",), adversarial=True)
    scores = score_recall(outcome(adv, HITS), Scoring(ks=(2,)))
    assert "coverage_recall@2" not in scores and "evidence_recall@2" not in scores and "retention" not in scores
    assert answer_scores(adv, Completion(text="Not mentioned.", usage=Usage(), latency_s=0.1, backend="f",
                                         model="m"))["qa_em"] == 1.0
    scored = score_recall(outcome(adv, HITS), Scoring(ks=(2,), adversarial_retrieval=True))
    assert scored["coverage_recall@2"] == 1.0


def test_scoring_rejects_bad_ks():
    with pytest.raises(ValueError, match="ks"):
        Scoring(ks=(0,))


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
    o = outcome(PROBE, [], context="", answer_recall=0.0, memory_entries=2)
    assert retention_scores(o) == {"context_retention": 0.0, "retention": 0.0}


def test_session_map():
    from datetime import datetime, timezone

    from lyra_lab.corpus import Turn

    turns = [Turn(id=f"t{i}", conversation_id="c", session_id=f"s{i % 2}", role="user", text="x",
                  timestamp=datetime(2024, 1, 1, tzinfo=timezone.utc)) for i in range(3)]
    assert session_map(turns) == {"t0": "s0", "t1": "s1", "t2": "s0"}
