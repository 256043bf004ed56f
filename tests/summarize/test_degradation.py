"""Summarizers report every fallback as a typed ``Degradation``, and their deadlines bound whole calls.

Against the simulated server, whose fault rules make one named chunk call fail
on every attempt (or hang once), and against fakes for the merge and refine
fallbacks.
"""

from __future__ import annotations

import time

import pytest

from lyra_lab import Degradation
from lyra_lab.backends import BackendConfig, FakeLLM, OpenAIBackend, SimulatedServer
from lyra_lab.chunking import TurnWindowChunker
from lyra_lab.corpus import Turn
from lyra_lab.summarize import MapReduceSummarizer, RefineSummarizer, SinglePassSummarizer
from lyra_lab.summarize._calls import GRACE_S

TURNS = [Turn(f"t{i}", "c", f"s{i // 2}", "user", f"Fact number {i}: item{i} is blue.") for i in range(8)]
CHUNKS = TurnWindowChunker(max_turns=2).chunk(TURNS)  # 4 chunks; chunk 3 holds t4 and t5 (item4, item5)
MERGE = "Combine the summaries above"  # in the merge prompt only (it quotes the partial summaries)


@pytest.fixture(scope="module")
def server():
    with SimulatedServer(hang_s=30) as srv:
        yield srv


@pytest.fixture
def sim(server):
    server.reset()
    yield server
    server.reset()


def _backend(server: SimulatedServer, **fields) -> OpenAIBackend:
    config = dict(name="simulated", base_url=server.base_url, model="sim", simulated=True, max_attempts=3,
                  retry_base_s=0.01, retry_max_s=0.02, timeout_s=2)
    return OpenAIBackend(BackendConfig(**{**config, **fields}))


def test_a_chunk_call_failing_every_attempt_degrades_the_summary_and_says_which_chunk(sim):
    rule = sim.fail_matching("503", contains="item5", excludes=MERGE)
    events = []
    summary = MapReduceSummarizer().summarize(CHUNKS, _backend(sim), on_event=events.append)
    (d,) = summary.degraded
    assert (d.stage, d.kind, d.where, d.cause, d.attempts) == ("summarize", "chunk_excerpt", "chunk 3/4",
                                                               "attempts", 3)
    assert d.metric == "degraded.summarize.chunk_excerpt" and d.turn_ids == ("t4", "t5")
    assert "HTTP 503" in d.error and "simulated 503 fault" in d.error
    assert summary.partial and summary.errors == (f"chunk 3/4: {d.error}",)
    assert "[not summarized: raw excerpt]" in summary.text and "item5" in summary.text
    log = sim.chat_log()
    assert [r.rule for r in log].count(rule) == 3  # every attempt of that chunk call, and nothing else
    assert len(log) == 3 + 3 + 1 and len(summary.calls) == 3 + 1  # three chunks and the merge answered
    complete = events[-1]
    assert complete.stage == "complete" and complete.detail["degraded"] == ["degraded.summarize.chunk_excerpt"]


@pytest.mark.parametrize("summarizer", [MapReduceSummarizer(), RefineSummarizer(), SinglePassSummarizer()],
                         ids=lambda s: s.name)
def test_a_hung_attempt_costs_the_backends_timeout_not_the_summarizers_deadline(sim, summarizer):
    """Backend timeout_s = 2 under the summarizers' own 120-300 s deadlines: the hang is cut at ~2 s and retried."""
    sim.fail_matching("hang", contains="item5", excludes=MERGE, times=1)
    started = time.monotonic()
    summary = summarizer.summarize(CHUNKS, _backend(sim, timeout_s=2))
    took = time.monotonic() - started
    assert summary.degraded == () and not summary.partial
    assert sorted(c.attempts for c in summary.calls)[-1] == 2  # the call that hung, answered on its retry
    assert sum(c.attempts for c in summary.calls) == len(sim.chat_log())
    assert [r.outcome for r in sim.chat_log()].count("hang") == 1
    assert 2.0 <= took < 6.0, took


def test_a_chunk_call_that_outlasts_its_deadline_is_degraded_with_cause_deadline(sim):
    sim.fail_matching("hang", contains="item5", excludes=MERGE)
    started = time.monotonic()
    summary = MapReduceSummarizer(chunk_timeout_s=1.5).summarize(CHUNKS, _backend(sim, timeout_s=0.5,
                                                                                   max_attempts=8))
    took = time.monotonic() - started
    (d,) = summary.degraded
    assert (d.kind, d.where, d.cause) == ("chunk_excerpt", "chunk 3/4", "deadline")
    assert d.attempts == 2  # 0.5 s each; a third would have had less than 0.5 s before the 1.5 s deadline
    assert "stopped by the call's deadline" in d.error
    assert took < 1.5 + GRACE_S + 0.5, took


def test_a_backend_that_ignores_its_deadline_is_abandoned_at_it():
    class Deaf(FakeLLM):
        def complete(self, messages, deadline=None, **params):
            if "item5" in messages[-1]["content"] and MERGE not in messages[-1]["content"]:
                time.sleep(3)
            return super().complete(messages, **params)

    started = time.monotonic()
    summary = MapReduceSummarizer(chunk_timeout_s=0.5).summarize(CHUNKS, Deaf())
    assert time.monotonic() - started < 2.5
    (d,) = summary.degraded
    assert (d.kind, d.where, d.cause, d.attempts) == ("chunk_excerpt", "chunk 3/4", "deadline", None)
    assert "timed out" in d.error


def test_a_failed_merge_is_a_merge_concatenated_degradation_over_every_turn():
    llm = FakeLLM(fail=lambda m: MERGE in m[-1]["content"])
    summary = MapReduceSummarizer().summarize(CHUNKS, llm)
    (d,) = summary.degraded
    assert (d.metric, d.where, d.cause, d.attempts) == ("degraded.summarize.merge_concatenated", "merge",
                                                        "attempts", 1)
    assert d.turn_ids == tuple(t.id for t in TURNS) and "injected failure" in d.error
    assert summary.text.startswith("Part 1:")


def test_a_failed_refine_step_is_a_step_excerpt_degradation():
    llm = FakeLLM(fail=lambda m: len(llm.calls) == 2)  # the second step (the calls so far include this one)
    summary = RefineSummarizer().summarize(CHUNKS, llm)
    (d,) = summary.degraded
    assert (d.metric, d.where, d.turn_ids) == ("degraded.summarize.step_excerpt", "chunk 2/4", ("t2", "t3"))
    assert summary.partial and len(summary.calls) == 3  # the later steps folded the excerpt in


def test_a_clean_summary_has_no_degradation():
    summary = MapReduceSummarizer().summarize(CHUNKS, FakeLLM())
    assert summary.degraded == () and not summary.partial
    assert all(isinstance(d, Degradation) for d in summary.degraded)
