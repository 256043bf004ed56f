"""The replay engine: virtual clock, memory writes, keep_raw, the run log, one memory for all recallers."""

from __future__ import annotations

import threading
import time
from collections import Counter
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lyra_lab.backends import FakeLLM, HashingEmbedder
from lyra_lab.replay import Pipeline, ReplaySetup, replay
from lyra_lab.runs import RunLog, read_log
from lyra_lab.testing import conversations


def pipeline(registries, **spec):
    spec.setdefault("chunker", {"name": "turn_window", "max_turns": 2})
    return Pipeline.from_dict(spec, registries)


def test_rollup_sees_the_replay_clock_not_wall_time(build, registries, spy_log):
    # three sessions spread over two months, replayed in well under a second
    conv = build.conversation([[0, 0.5], [24 * 30, 24 * 30 + 1], [24 * 60]])
    p = pipeline(registries, summarizer="concat", rollup="spy")
    replay(conv, [], p, ReplaySetup(FakeLLM(), recallers={}))
    calls = spy_log["rollup"]
    assert len(calls) == 3
    expected = [build.T0 + timedelta(hours=h) for h in (0.5, 24 * 30 + 1, 24 * 60)]
    assert [now for now, _, _ in calls] == expected
    # the rollup's now is the newest turn in memory at that moment, never the wall clock
    assert [newest for _, newest, _ in calls] == expected
    assert all(now.year == 2024 for now, _, _ in calls)


def test_a_probe_sees_only_turns_before_its_asked_at(build, registries, spy_log):
    conv = build.conversation([[0, 1], [10, 11], [20]])
    probes = [build.probe("p_at_10", 10), build.probe("p_mid", 15), build.probe("p_end", None)]
    result = replay(conv, probes, pipeline(registries), ReplaySetup(FakeLLM(), recallers={"spy": registries.recallers.build("spy")}, k=50))
    seen = {query: (now, newest, ids) for query, now, newest, ids in spy_log["recall"]}
    now, newest, ids = seen["what about p_at_10?"]
    assert now == build.T0 + timedelta(hours=10)
    assert ids == {"c1:s0:t0", "c1:s0:t1"}  # the turn AT hour 10 is not yet in memory
    now, newest, ids = seen["what about p_mid?"]
    assert newest == build.T0 + timedelta(hours=11) and "c1:s2:t0" not in ids
    now, newest, ids = seen["what about p_end?"]
    assert newest == now == build.T0 + timedelta(hours=20)
    # hits and outcomes agree with what the recaller saw; outcomes keep the input probe order
    outcomes = result.outcomes["spy"]
    assert [o.probe.id for o in outcomes] == ["p_at_10", "p_mid", "p_end"]
    assert {t for h in outcomes[0].hits for t in h.entry.turn_ids} == {"c1:s0:t0", "c1:s0:t1"}
    # raw turns plus one chunk per flushed session (no summarizer, keep_raw); the last session's one-turn
    # chunk is its raw turn again, so it is not stored twice
    assert outcomes[0].memory.entries == 3 and outcomes[2].memory.entries == 7


def test_summaries_cover_their_window_and_keep_raw_decides_whether_turns_stay(build, registries):
    conv = build.conversation([[0, 1, 2], [30, 31]])
    kept = replay(conv, [], pipeline(registries, summarizer="concat"), ReplaySetup(FakeLLM(), recallers={}))
    kinds = Counter(e.kind for e in kept.store)
    assert kinds == {"turn": 5, "summary": 2}
    summaries = kept.store.entries(kind="summary")
    assert [s.turn_ids for s in summaries] == [("c1:s0:t0", "c1:s0:t1", "c1:s0:t2"), ("c1:s1:t0", "c1:s1:t1")]
    assert summaries[0].start == build.T0 and summaries[0].end == build.T0 + timedelta(hours=2)
    assert summaries[1].session_ids == ("c1:s1",)

    dropped = replay(conv, [], pipeline(registries, summarizer="concat", keep_raw=False), ReplaySetup(FakeLLM(), recallers={}))
    assert Counter(e.kind for e in dropped.store) == {"summary": 2}
    # either way every turn is still covered by some entry
    for result in (kept, dropped):
        assert {t for e in result.store for t in e.turn_ids} == {t.id for t in conv.turns()}


def test_without_a_summarizer_chunks_go_into_memory_as_they_are(build, registries):
    conv = build.conversation([[0, 1, 2]])
    result = replay(conv, [], pipeline(registries, keep_raw=False), ReplaySetup(FakeLLM(), recallers={}))
    chunks = result.store.entries(kind="chunk")
    assert [c.turn_ids for c in chunks] == [("c1:s0:t0", "c1:s0:t1"), ("c1:s0:t2",)]
    assert "session 0 turn 2" in chunks[1].text
    assert len(result.store) == 2  # raw turns replaced by their chunks
    assert result.phases["summarize"].usage.calls == 0


def test_an_empty_summary_is_not_written_and_the_raw_turns_stay(build, registries):
    conv = build.conversation([[0, 1]])
    result = replay(conv, [], pipeline(registries, summarizer="concat", keep_raw=False), ReplaySetup(FakeLLM(outputs=["   "]), recallers={}))
    assert Counter(e.kind for e in result.store) == {"turn": 2}


def test_one_replay_serves_every_recaller_and_costs_are_counted(build, registries):
    conv = build.conversation([[0, 1, 2], [30, 31]])
    probes = [build.probe("q1", None, evidence=("c1:s0:t1",))]
    llm = FakeLLM()
    recallers = {name: registries.recallers.build(name) for name in ("dense", "bm25", "hybrid")}
    result = replay(conv, probes, pipeline(registries, summarizer="concat"), ReplaySetup(llm, embedder=HashingEmbedder(), recallers=recallers, k=3))
    assert len(llm.calls) == 2  # one summary per session, whatever the number of recallers
    assert set(result.outcomes) == {"dense", "bm25", "hybrid"}
    for outcomes in result.outcomes.values():
        (o,) = outcomes
        assert 0 < len(o.hits) <= 3 and o.context and o.context_tokens > 0
        assert o.memory.entries == 7 and o.memory.tokens > 0
    assert any("session 1 turn 1" in e.text for e in result.store)
    summarize = result.phases["summarize"]
    assert summarize.usage.calls == 2 and len(summarize.latencies_s) == 2
    assert summarize.usage.prompt_tokens > 0 and summarize.usage.completion_tokens > 0
    assert result.recall_phases["bm25"]["embed"].usage.calls == 0  # BM25 never embeds
    assert result.recall_phases["dense"]["embed"].usage.calls >= 1
    assert result.flushes == 2 and result.memory_entries == 7


def test_context_stays_within_the_context_budget(build, registries):
    conv = build.conversation([[i * 0.1 for i in range(30)]])
    probes = [build.probe("q", None)]
    result = replay(conv, probes, pipeline(registries, context_budget=25), ReplaySetup(FakeLLM(), embedder=HashingEmbedder(), recallers={"dense": registries.recallers.build("dense")}, k=10))
    (o,) = result.outcomes["dense"]
    assert 0 < o.context_tokens <= 25


class SlowFake(FakeLLM):
    """Sleeps per call and tracks calls in flight, to see the summarize pool at work."""

    def __init__(self, delay: float):
        super().__init__(respond=lambda msgs: "summary of " + msgs[-1]["content"][-30:])
        self.delay = delay
        self.in_flight = 0
        self.max_in_flight = 0
        self._gate = threading.Lock()

    def complete(self, messages, **params):
        with self._gate:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        time.sleep(self.delay)
        try:
            return super().complete(messages, **params)
        finally:
            with self._gate:
                self.in_flight -= 1


def test_workers_summarize_ahead_without_changing_the_memory(build, registries):
    conv = build.conversation([[d * 24, d * 24 + 1] for d in range(6)])
    p = pipeline(registries, summarizer="concat")
    serial, parallel = SlowFake(0.02), SlowFake(0.02)
    one = replay(conv, [], p, ReplaySetup(serial, recallers={}, workers=1))
    three = replay(conv, [], p, ReplaySetup(parallel, recallers={}, workers=3))
    assert one.store.dumps() == three.store.dumps()
    assert serial.max_in_flight == 1 and parallel.max_in_flight > 1


def test_events_go_to_the_run_log_and_a_failing_progress_callback_is_harmless(build, registries, tmp_path):
    conv = build.conversation([[0, 1], [30]])
    probes = [build.probe("q", None)]

    def explode(kind, fields):
        raise RuntimeError("progress sink broke")

    with RunLog(tmp_path / "log.jsonl") as log:
        result = replay(conv, probes, pipeline(registries, summarizer="concat", rollup="time_ladder", budget=60), ReplaySetup(FakeLLM(), embedder=HashingEmbedder(), recallers={"dense": registries.recallers.build("dense")}, log=log, on_event=explode))
    events = list(read_log(tmp_path / "log.jsonl"))
    kinds = Counter(e["event"] for e in events)
    assert kinds["summary_written"] == 2 and kinds["rollup_report"] == 2 and kinds["recall"] == 1
    assert kinds["llm_call"] == result.phases["summarize"].usage.calls + result.phases["rollup"].usage.calls
    call = next(e for e in events if e["event"] == "llm_call")
    assert {"phase", "latency_s", "prompt_tokens", "completion_tokens", "cost_usd", "cached"} <= set(call)
    assert all(e["conversation_id"] == "c1" for e in events)
    recall = next(e for e in events if e["event"] == "recall")
    (outcome,) = result.outcomes["dense"]
    assert recall["probe_id"] == "q" and recall["now"].startswith("2024-01-02")
    assert recall["hits"] and [h[0] for h in recall["hits"]] == [h.entry.id for h in outcome.hits]


def test_probes_of_another_conversation_are_refused(build, registries):
    conv = build.conversation([[0]])
    with pytest.raises(ValueError, match="another conversation"):
        replay(conv, [build.probe("q", None, cid="other")], pipeline(registries), ReplaySetup(FakeLLM(), recallers={}))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(conv=conversations(), keep_raw=st.booleans(),
       trigger=st.sampled_from([{"name": "session_end"}, {"name": "every_turns", "n": 3}, {"name": "idle_gap"}]))
def test_memory_always_covers_every_fed_turn_exactly_as_keep_raw_says(registries, conv, keep_raw, trigger):
    p = pipeline(registries, summarizer="concat", keep_raw=keep_raw, trigger=trigger)
    result = replay(conv, [], p, ReplaySetup(FakeLLM(), recallers={}))
    entries = list(result.store)
    all_ids = {t.id for t in conv.turns()}
    assert {t for e in entries for t in e.turn_ids} == all_ids
    raw = {e.turn_ids[0] for e in entries if e.kind == "turn"}
    summarized = {t for e in entries if e.kind == "summary" for t in e.turn_ids}
    if keep_raw:
        assert raw == all_ids
    else:
        assert raw.isdisjoint(summarized) and raw | summarized == all_ids
    assert result.phases["summarize"].usage.calls == result.flushes
