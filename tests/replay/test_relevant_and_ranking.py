"""What replay hands to scoring for fair metrics: relevant memory entries, a deeper ranking, the counter."""

from __future__ import annotations

import math

import pytest

from lyra_lab.backends import FakeLLM, HashingEmbedder
from lyra_lab.measures import relevant_count, score_outcome
from lyra_lab.replay import Pipeline, replay


def pipeline(registries, **spec):
    spec.setdefault("chunker", {"name": "turn_window", "max_turns": 8})
    return Pipeline.from_dict(spec, registries)


def test_n_relevant_counts_memory_entries_and_a_perfect_digest_hit_scores_one(build, registries):
    conv = build.conversation([[0, 1, 2], [30, 31]])
    evidence = ("c1:s1:t0", "c1:s1:t1")  # both turns of session 1
    probes = [build.probe("q", None, evidence=evidence)]
    spy = {"spy": registries.recallers.build("spy")}  # newest entries first
    kept = replay(conv, probes, pipeline(registries, summarizer="concat"), backend=FakeLLM(), recallers=spy, k=3)
    alone = replay(conv, probes, pipeline(registries, summarizer="concat", keep_raw=False), backend=FakeLLM(),
                   recallers=spy, k=3)
    (o_kept,), (o_alone,) = kept.outcomes["spy"], alone.outcomes["spy"]
    # raw turns kept: the two evidence turns and session 1's summary; summaries alone: that summary only
    assert o_kept.n_relevant == 3 == relevant_count(evidence, [e.turn_ids for e in kept.store])
    assert o_alone.n_relevant == 1 == relevant_count(evidence, [e.turn_ids for e in alone.store])
    # summaries alone: session 1's summary (newest) at rank 1 is the ideal list -> nDCG 1.0
    # (with the evidence count as ideal, 2 slots, it would be 1 / (1 + 1/log2(3)) = 0.613)
    assert o_alone.hits[0].entry.kind == "summary"
    assert score_outcome(o_alone, ks=[3])["ndcg@3"] == 1.0
    # kept: newest first = t1 of s1 (31h), summary of s1 (end 31h, id after), t0 of s1 (30h): all relevant,
    # R = 3 -> 1.0 as well; coverage is full but only the two raw turns count directly
    scores = score_outcome(o_kept, ks=[1, 3])
    assert scores["ndcg@3"] == pytest.approx(1.0)
    assert scores["evidence_recall@3"] == 1.0 and scores["coverage_recall@1"] == 0.5
    # alone: the summary covers both turns but holds neither verbatim
    alone_scores = score_outcome(o_alone, ks=[1])
    assert alone_scores["coverage_recall@1"] == 1.0 and alone_scores["evidence_recall@1"] == 0.0
    assert not math.isnan(alone_scores["ndcg_any@1"])


def test_the_budget_ranking_goes_deeper_than_k_without_embedding_the_query_twice(build, registries):
    conv = build.conversation([[i * 0.1 for i in range(12)]])
    probes = [build.probe("q", None, evidence=("c1:s0:t0",))]
    dense = {"dense": registries.recallers.build("dense")}
    result = replay(conv, probes, pipeline(registries), backend=FakeLLM(), embedder=HashingEmbedder(),
                    recallers=dense, k=2)
    (o,) = result.outcomes["dense"]
    # memory: 12 raw turns and the 2 chunks holding them; the ranking has every entry, the hits k = 2
    assert o.memory_entries == 14 and len(o.hits) == 2 and len(o.ranking) == 14
    assert o.n_relevant == 2  # turn t0 and the first chunk
    assert [h.entry.id for h in o.ranking[:2]] == [h.entry.id for h in o.hits]
    # one passage batch and one query embedding: the deeper call reused the query's vector
    assert result.recall_phases["dense"]["embed"].usage.calls == 2
    assert o.count is not None and o.count(o.context) == o.context_tokens
    scores = score_outcome(o, ks=[2], context_budgets=[10_000])
    assert scores["coverage_recall@10000tok"] == 1.0  # the whole memory fits: the evidence is in it


def test_no_deeper_call_when_the_memory_has_fewer_than_k_entries(build, registries, spy_log):
    conv = build.conversation([[0, 1]])
    probes = [build.probe("q", None, evidence=("c1:s0:t0",))]
    result = replay(conv, probes, pipeline(registries), backend=FakeLLM(),
                    recallers={"spy": registries.recallers.build("spy")}, k=5)
    (o,) = result.outcomes["spy"]
    # memory: 2 raw turns and their chunk, fewer than k = 5: one recall call, ranking = hits
    assert len(spy_log["recall"]) == 1 and o.ranking == o.hits and len(o.hits) == o.memory_entries == 3


def test_depth_k_asks_each_recaller_once_and_the_ranking_is_the_hits(build, registries, spy_log):
    conv = build.conversation([[i * 0.1 for i in range(12)]])
    probes = [build.probe("q", None, evidence=("c1:s0:t0",))]
    deep = replay(conv, probes, pipeline(registries), backend=FakeLLM(),
                  recallers={"spy": registries.recallers.build("spy")}, k=2)
    calls_deep = len(spy_log["recall"])
    shallow = replay(conv, probes, pipeline(registries), backend=FakeLLM(),
                     recallers={"spy": registries.recallers.build("spy")}, k=2, depth=2)
    (o_deep,), (o_shallow,) = deep.outcomes["spy"], shallow.outcomes["spy"]
    # 14 entries > k = 2: the default asks a second, 100-deep recall; depth = k asks once
    assert calls_deep == 2 and len(spy_log["recall"]) == 3
    assert len(o_deep.ranking) == 14 and o_shallow.ranking == o_shallow.hits
    # the k-deep metrics are the same either way (latency aside)
    shallow_scores, deep_scores = score_outcome(o_shallow, ks=[2]), score_outcome(o_deep, ks=[2])
    shallow_scores.pop("recall_latency_s"), deep_scores.pop("recall_latency_s")
    assert shallow_scores == deep_scores and len(shallow_scores) > 5
