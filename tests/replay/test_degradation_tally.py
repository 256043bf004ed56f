"""A replay counts every fallback per stage and every call's attempts, and logs each fallback.

The tallies add up with ``+`` (a cell sums its conversations, a run its cells);
the run log gets one ``degraded`` event per fallback, and ``summary_written`` /
``rollup_report`` list theirs.
"""

from __future__ import annotations

from collections import Counter

from lyra_lab import Degradation, DegradationTally
from lyra_lab.backends import AttemptTally, Completion, FakeLLM, Usage
from lyra_lab.replay import PhaseMeter, Pipeline, ReplaySetup, replay

CHUNK = Degradation("summarize", "chunk_excerpt", "chunk 1/2", "attempts", "HTTP 503", attempts=8)
EMPTY = Degradation("flush", "raw_turns", "flush 3", "empty", "empty summary")
ROLLUP = Degradation("rollup", "unchanged", "time_ladder: day digest 2024-01-01", "deadline", "timed out", 2)


def test_degradation_tallies_add_up_and_name_their_metrics():
    one, two = DegradationTally.of([CHUNK, EMPTY]), DegradationTally.of([CHUNK, ROLLUP])
    total = sum([one, two])
    assert total == one + two and total.total == 4 and total + DegradationTally() == total
    assert total.metrics() == {"degraded.flush.raw_turns": 1, "degraded.rollup.unchanged": 1,
                               "degraded.summarize.chunk_excerpt": 2}
    assert total.by_stage() == {"flush": 1, "rollup": 1, "summarize": 2}
    assert not DegradationTally() and DegradationTally().metrics() == {}


def test_attempt_tallies_add_up():
    a = AttemptTally.of(answered=[1, 1, 3], failed=["deadline"])
    b = AttemptTally.of(answered=[0, 1], failed=["attempts", "deadline"])
    total = sum([a, b])
    assert total.answered == {0: 1, 1: 3, 3: 1} and total.failed == {"attempts": 1, "deadline": 2}
    assert (total.calls, total.retried, total.failed_calls) == (8, 1, 3)
    assert str(total) == ("8 calls: 3 answered at attempt 1, 1 at attempt 3, 1 from the response cache; "
                          "3 failed (attempts 1, deadline 2)")


def completion(attempts: int, cached: bool = False) -> Completion:
    return Completion("t", Usage(calls=1), 0.1, "fake", "m", cached=cached, attempts=attempts)


def test_the_meter_tallies_attempts_per_phase_and_fallbacks_per_stage():
    events = []

    def sink(event, /, **fields):
        events.append((event, fields))

    meter = PhaseMeter(sink)
    meter.completions("summarize", [completion(1), completion(2), completion(0, cached=True)], flush=0)
    meter.degradations("summarize", [CHUNK], flush=0)
    meter.degradations("summarize", [EMPTY], flush=1)
    meter.completions("rollup", [completion(1)], flush=1)
    meter.degradations("rollup", [ROLLUP], flush=1)
    assert meter.degradation_tally() == DegradationTally.of([CHUNK, EMPTY, ROLLUP])
    assert meter.attempt_tally("summarize") == AttemptTally({0: 1, 1: 1, 2: 1}, {"attempts": 1})
    assert meter.attempt_tally("rollup") == AttemptTally({1: 1}, {"deadline": 1})
    assert meter.attempt_tally() == meter.attempt_tally("summarize") + meter.attempt_tally("rollup")
    assert [f["attempts"] for kind, f in events if kind == "llm_call"] == [1, 2, 0, 1]
    degraded = [f for kind, f in events if kind == "degraded"]
    assert [(f["phase"], f["metric"], f["flush"]) for f in degraded] == [
        ("summarize", "degraded.summarize.chunk_excerpt", 0), ("summarize", "degraded.flush.raw_turns", 1),
        ("rollup", "degraded.rollup.unchanged", 1)]
    assert degraded[0]["cause"] == "attempts" and degraded[0]["attempts"] == 8


def respond(messages) -> str:
    content = messages[-1]["content"]
    if "Combine the summaries" in content and "topic1x0" in content:
        return ""  # session 1's merged summary comes back empty
    return " ".join(content.split()[:12])


def fail(messages) -> bool:
    content = messages[-1]["content"]
    chunk = "topic0x1" in content and "Combine the summaries" not in content  # session 0's second chunk
    return chunk or "List the facts" in content  # and every fact-extraction call


class ListLog:
    """A run log in a list: ``replay`` takes anything with ``event(kind, /, **fields)``."""

    def __init__(self):
        self.events = []

    def event(self, event, /, **fields):
        self.events.append({"event": event, **fields})


def test_a_replay_logs_each_fallback_of_each_stage(build):
    conv = build.conversation([[0, 1], [30, 31]])
    pipeline = Pipeline.from_dict({"chunker": {"name": "turn_window", "max_turns": 1}, "summarizer": "map_reduce",
                                   "rollup": {"name": "fact_extraction", "batch_turns": 2}, "budget": 1000})
    log = ListLog()
    replay(conv, [], pipeline, ReplaySetup(FakeLLM(respond=respond, fail=fail), recallers={}, log=log))
    events = log.events
    degraded = [e for e in events if e["event"] == "degraded"]
    assert Counter(e["metric"] for e in degraded) == {
        "degraded.summarize.chunk_excerpt": 1, "degraded.flush.raw_turns": 1, "degraded.rollup.unchanged": 2}
    chunk = next(e for e in degraded if e["kind"] == "chunk_excerpt")
    assert (chunk["flush"], chunk["where"], chunk["first_turn"], chunk["cause"]) == (0, "chunk 2/2", "c1:s0:t1",
                                                                                     "attempts")
    written = [e for e in events if e["event"] == "summary_written"]
    assert [e["degraded"] for e in written] == [["degraded.summarize.chunk_excerpt"], ["degraded.flush.raw_turns"]]
    reports = [e for e in events if e["event"] == "rollup_report"]
    assert [e["degraded"] for e in reports] == [["degraded.rollup.unchanged"]] * 2
    assert all(e["attempts"] == 1 for e in events if e["event"] == "llm_call")
