"""What replay hands to scoring for fair metrics: relevant memory entries, a ranking read deeper, the counter."""

from __future__ import annotations

import dataclasses
import math

import pytest

from lyra_lab.backends import FakeLLM, HashingEmbedder
from lyra_lab.measures import Scoring, relevant_count, score_recall
from lyra_lab.replay import Pipeline, ReplaySetup, replay_iter


def pipeline(registries, **spec):
    spec.setdefault("chunker", {"name": "turn_window", "max_turns": 8})
    return Pipeline.from_dict(spec, registries)


def scored(conv, probes, pipe, setup, scoring):
    """``(run, [(outcome, scores, 20-deep ranking ids)])``: every outcome scored as its probe is asked."""
    run = replay_iter(conv, probes, pipe, setup)
    out = [(o, score_recall(o, scoring), [e.id for e in o.ranking.entries(20)]) for asked in run for o in asked]
    return run, out


def test_relevant_entries_count_memory_entries_and_a_perfect_digest_hit_scores_one(build, registries):
    conv = build.conversation([[0, 1, 2], [30, 31]])
    evidence = ("c1:s1:t0", "c1:s1:t1")  # both turns of session 1
    probes = [build.probe("q", None, evidence=evidence)]
    spy = {"spy": registries.recallers.build("spy")}  # newest entries first
    scoring = Scoring(ks=(1, 3))
    kept, [(o_kept, s_kept, _)] = scored(conv, probes, pipeline(registries, summarizer="concat"),
                                         ReplaySetup(FakeLLM(), recallers=spy, k=3), scoring)
    alone, [(o_alone, s_alone, _)] = scored(conv, probes, pipeline(registries, summarizer="concat", keep_raw=False),
                                            ReplaySetup(FakeLLM(), recallers=spy, k=3), scoring)
    # raw turns kept: the two evidence turns and session 1's summary; summaries alone: that summary only
    assert o_kept.memory.relevant_entries == 3 == relevant_count(evidence, [e.turn_ids for e in kept.result.store])
    assert o_alone.memory.relevant_entries == 1 == relevant_count(evidence, [e.turn_ids for e in alone.result.store])
    # summaries alone: session 1's summary (newest) at rank 1 is the ideal list -> nDCG 1.0
    # (with the evidence count as ideal, 2 slots, it would be 1 / (1 + 1/log2(3)) = 0.613)
    assert o_alone.hits[0].entry.kind == "summary"
    assert s_alone["ndcg@3"] == 1.0
    # kept: newest first = t1 of s1 (31h), summary of s1 (end 31h, id after), t0 of s1 (30h): all relevant,
    # R = 3 -> 1.0 as well; coverage is full but only the two raw turns count directly
    assert s_kept["ndcg@3"] == pytest.approx(1.0)
    assert s_kept["evidence_recall@3"] == 1.0 and s_kept["coverage_recall@1"] == 0.5
    # alone: the summary covers both turns but holds neither verbatim
    assert s_alone["coverage_recall@1"] == 1.0 and s_alone["evidence_recall@1"] == 0.0
    assert not math.isnan(s_alone["ndcg_any@1"])


def test_the_ranking_reads_deeper_than_k_without_embedding_the_query_twice(build, registries):
    conv = build.conversation([[i * 0.1 for i in range(12)]])
    probes = [build.probe("q", None, evidence=("c1:s0:t0",))]
    dense = {"dense": registries.recallers.build("dense")}
    run, [(o, scores, deep)] = scored(conv, probes, pipeline(registries),
                                      ReplaySetup(FakeLLM(), embedder=HashingEmbedder(), recallers=dense, k=2),
                                      Scoring(ks=(2,), budgets=(10_000,)))
    # memory: 12 raw turns and the 2 chunks holding them; the ranking has every entry, the hits k = 2
    assert o.memory.entries == 14 and len(o.hits) == 2 and len(deep) == 14
    assert o.memory.relevant_entries == 2  # turn t0 and the first chunk
    assert deep[:2] == [h.entry.id for h in o.hits]
    # one passage batch and one query embedding: the deeper call reused the query's vector
    assert run.result.recall_phases["dense"]["embed"].usage.calls == 2
    assert o.count(o.context) == o.context_tokens
    assert scores["coverage_recall@10000tok"] == 1.0  # the whole memory fits: the evidence is in it


def test_no_deeper_call_when_the_memory_has_fewer_than_k_entries(build, registries, spy_log):
    conv = build.conversation([[0, 1]])
    probes = [build.probe("q", None, evidence=("c1:s0:t0",))]
    _, [(o, _, deep)] = scored(conv, probes, pipeline(registries),
                               ReplaySetup(FakeLLM(), recallers={"spy": registries.recallers.build("spy")}, k=5),
                               Scoring(ks=(5,), budgets=(256,)))
    # memory: 2 raw turns and their chunk, fewer than k = 5: one recall call, ranking = hits
    assert len(spy_log["recall"]) == 1 and deep == [h.entry.id for h in o.hits] and len(o.hits) == o.memory.entries == 3


def test_a_ranking_is_read_deeper_only_when_a_measure_needs_it(build, registries, spy_log):
    conv = build.conversation([[i * 0.1 for i in range(12)]])
    probes = [build.probe("q", None, evidence=("c1:s0:t0",))]
    setup = ReplaySetup(FakeLLM(), recallers={"spy": registries.recallers.build("spy")}, k=2)
    run = replay_iter(conv, probes, pipeline(registries), setup)
    shallow = [score_recall(o, Scoring(ks=(2,))) for asked in run for o in asked]
    assert len(spy_log["recall"]) == 1  # no budget, no session map: the k hits were enough
    run = replay_iter(conv, probes, pipeline(registries), setup)
    deep = [score_recall(o, Scoring(ks=(2,), budgets=(10_000,))) for asked in run for o in asked]
    assert len(spy_log["recall"]) == 3  # the budget read the ranking deeper: one more call
    # the k-deep metrics are the same either way (latency aside)
    for scores in (shallow[0], deep[0]):
        scores.pop("recall_latency_s")
    assert {k: v for k, v in deep[0].items() if not k.endswith("tok")} == shallow[0] and len(shallow[0]) > 5


def test_a_ranking_read_after_the_memory_changed_is_an_error(build, registries):
    conv = build.conversation([[0, 1, 2, 3]])
    probes = [build.probe("q", 0.5)]
    setup = ReplaySetup(FakeLLM(), recallers={"spy": registries.recallers.build("spy")}, k=1)
    run = replay_iter(conv, probes, pipeline(registries), setup)
    (outcome,) = next(iter(run))
    list(run)  # the replay goes on: memory changes
    with pytest.raises(RuntimeError, match="after the memory changed"):
        outcome.ranking.entries(50)


@pytest.mark.parametrize("name", ["dense", "bm25", "hybrid"])
def test_the_timed_hits_are_the_deep_rankings_first_entries(build, registries, name):
    # Equal-budget and session measures read the ranking deeper than the timed top-k; it must be the
    # same ranking: hybrid fuses each list's top max(depth, candidates), so its deep reads stay within
    # its 50 candidates (the first fetch is 40 deep) to rank as its timed call did.
    conv = build.conversation([[i * 0.1 for i in range(40)], [30 + i * 0.1 for i in range(40)]])
    probes = [dataclasses.replace(build.probe(f"q{i}", None, evidence=(f"c1:s{i % 2}:t{i}",)),
                                  question=f"session {i % 2} turn {i} about topic{i % 2}x{i}") for i in range(6)]
    recaller = {name: registries.recallers.build(name)}
    _, out = scored(conv, probes, pipeline(registries, chunker={"name": "turn_window", "max_turns": 2}),
                    ReplaySetup(FakeLLM(), embedder=HashingEmbedder(), recallers=recaller, k=20),
                    Scoring(ks=(20,), budgets=(64, 1024)))
    for outcome, _, deep in out:
        assert [h.entry.id for h in outcome.hits] == deep[:20]
