"""The time ladder on hand-built stores: folds by period, provenance, no half-commit, idempotence."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from lyra_lab import ConfigError
from lyra_lab.backends import FakeLLM
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.rollup import ROLLUPS, CompactRequest, TimeLadder, render_memory
from lyra_lab.testing import word_count

MON = datetime(2023, 5, 8, 10, 0, tzinfo=timezone.utc)  # a Monday of ISO week 19


def turn(i: int, at: datetime, text: str = "") -> MemoryEntry:
    return MemoryEntry(f"turn:t{i}", "c", "turn", text or f"user: message number {i} with some words",
                       (f"t{i}",), ("s1",), at, at)


def store_over_three_days() -> MemoryStore:
    # Two turns on Monday, two on Tuesday, one on Friday.
    stamps = [MON, MON + timedelta(hours=1), MON + timedelta(days=1), MON + timedelta(days=1, hours=2),
              MON + timedelta(days=4)]
    return MemoryStore([turn(i, t) for i, t in enumerate(stamps)])


def test_folds_the_oldest_days_into_day_digests_with_provenance():
    store, llm = store_over_three_days(), FakeLLM(outputs=["monday digest", "tuesday digest"])
    before = word_count(render_memory(store.entries("c")))
    assert before == 40  # five lines of eight words; Monday's fold alone leaves 27 > 20
    report = TimeLadder().compact(store, "c", CompactRequest(
        budget=20, backend=llm, now=MON + timedelta(days=4, hours=1), count=word_count))
    assert report.ran and report.error is None and len(llm.calls) == 2
    digests = store.entries("c", kind="digest")
    assert [(d.period, d.level, d.turn_ids, d.text) for d in digests] == [
        ("2023-05-08", 1, ("t0", "t1"), "monday digest"),
        ("2023-05-09", 1, ("t2", "t3"), "tuesday digest"),
    ]
    assert all(d.id.startswith(f"digest:day:{d.period}:") for d in digests)
    assert (digests[0].start, digests[0].end) == (MON, MON + timedelta(hours=1))
    assert [e.id for e in store.entries("c", kind="turn")] == ["turn:t4"]  # Friday is not a day old
    assert set(report.folded) == {"t0", "t1", "t2", "t3"} and report.kept == ("t4",) and not report.dropped
    assert report.tokens_after <= report.budget
    # One user message holding instruction and transcript, temperature 0.
    (message,) = llm.calls[0]
    assert message["role"] == "user" and "2023-05-08" in message["content"]
    assert "message number 0" in message["content"] and "message number 2" not in message["content"]


def test_stops_folding_once_under_budget():
    store, llm = store_over_three_days(), FakeLLM(outputs=["m"])
    before = word_count(render_memory(store.entries("c")))
    TimeLadder(headroom=1.0).compact(store, "c", CompactRequest(
        budget=before - 1, backend=llm, now=MON + timedelta(days=30), count=word_count))
    assert len(llm.calls) == 1  # Monday alone was enough
    assert [d.period for d in store.entries("c", kind="digest")] == ["2023-05-08"]


def test_climbs_to_week_and_month_digests_and_drops_oldest_when_still_over():
    store = MemoryStore([turn(i, MON + timedelta(days=3 * i)) for i in range(12)])  # 33 days
    report = TimeLadder(headroom=1.0).compact(store, "c", CompactRequest(
        budget=4, backend=FakeLLM(), now=MON + timedelta(days=80), count=word_count))
    assert report.ran and not report.error
    assert word_count(render_memory(store.entries("c"))) <= 4
    assert report.dropped  # 4 words cannot hold even a month digest of FakeLLM's 12 echoed words
    assert set(report.dropped) | set(report.kept) | set(report.folded) == {f"t{i}" for i in range(12)}
    assert report.calls and all(c.usage.calls == 1 for c in report.calls)


def month_lines_only(text: str) -> int:
    """0 once every line is a September or October month digest, else 99 per other line."""
    return sum(99 for line in text.splitlines() if not line.startswith(("[2023-09]", "[2023-10]")))


def test_month_digests_nest_week_parts_split_at_month_boundaries():
    # ISO week 2023-W39 runs Mon 25 Sep .. Sun 1 Oct: its turns split into a September and an October part.
    sept30 = datetime(2023, 9, 30, 12, tzinfo=timezone.utc)
    store = MemoryStore([turn(1, sept30), turn(2, sept30 + timedelta(days=1))])
    TimeLadder(headroom=1.0, day_after_days=0, week_after_days=0, month_after_days=0).compact(
        store, "c", CompactRequest(budget=0, backend=FakeLLM(outputs=["d1", "d2", "w1", "w2", "m1", "m2"]),
                                   now=datetime(2023, 12, 1, tzinfo=timezone.utc), count=month_lines_only))
    months = store.entries("c")
    assert sorted((d.period, d.turn_ids, d.level) for d in months) == [("2023-09", ("t1",), 3),
                                                                      ("2023-10", ("t2",), 3)]


def test_llm_failure_changes_nothing_and_reports_the_error():
    store = store_over_three_days()
    snapshot = store.dumps()
    # The second digest call fails: the first digest must not be committed either.
    llm = FakeLLM(fail=lambda msgs: len(llm.calls) >= 2)
    report = TimeLadder().compact(store, "c", CompactRequest(
        budget=5, backend=llm, now=MON + timedelta(days=9), count=word_count))
    assert store.dumps() == snapshot and len(llm.calls) == 2
    assert not report.ran and "HTTP 500" in report.error and report.tokens_after == report.tokens_before
    # An exception that is not a BackendError (a user's backend bug) fails clean too.
    class Broken:
        name, model = "broken", "x"

        def complete(self, messages, **params):
            raise KeyError("boom")

    report = TimeLadder().compact(store, "c", CompactRequest(
        budget=5, backend=Broken(), now=MON + timedelta(days=9), count=word_count))
    assert store.dumps() == snapshot and "KeyError" in report.error
    # So does an empty completion (no digest is better than an empty one).
    report = TimeLadder().compact(store, "c", CompactRequest(
        budget=5, backend=FakeLLM(outputs=["  "]), now=MON + timedelta(days=9), count=word_count))
    assert store.dumps() == snapshot and "empty" in report.error


def test_compacting_again_with_nothing_new_changes_nothing():
    store = store_over_three_days()
    TimeLadder().compact(store, "c", CompactRequest(
        budget=20, backend=FakeLLM(), now=MON + timedelta(days=9), count=word_count))
    snapshot, llm = store.dumps(), FakeLLM()
    report = TimeLadder().compact(store, "c", CompactRequest(
        budget=20, backend=llm, now=MON + timedelta(days=9), count=word_count))
    assert store.dumps() == snapshot and not report.ran and not llm.calls


def test_under_budget_times_headroom_does_not_run():
    store = store_over_three_days()
    tokens = word_count(render_memory(store.entries("c")))
    report = TimeLadder(headroom=1.25).compact(store, "c", CompactRequest(
        budget=int(tokens / 1.2), backend=FakeLLM(), now=MON + timedelta(days=9), count=word_count))
    assert not report.ran and report.reason == "under budget x headroom"


def test_validation():
    with pytest.raises(ConfigError, match="headroom"):
        ROLLUPS.build({"name": "time_ladder", "headroom": 0.9})
    with pytest.raises(ConfigError, match="week_after_days"):
        ROLLUPS.build({"name": "time_ladder", "day_after_days": 10})
    with pytest.raises(ValueError, match="aware"):
        TimeLadder().compact(MemoryStore(), "c", CompactRequest(
            budget=1, backend=FakeLLM(), now=datetime(2023, 1, 1), count=word_count))
    for budget in (-1, True, 2.5):
        with pytest.raises(ValueError, match="budget must be a non-negative int"):
            CompactRequest(budget=budget, backend=FakeLLM(), now=MON, count=word_count)


def test_a_period_too_big_for_one_prompt_is_summarized_in_parts():
    store = MemoryStore([turn(i, MON + timedelta(minutes=i)) for i in range(6)])  # 8 words per line
    llm = FakeLLM(outputs=["part one", "part two", "part three"])
    report = TimeLadder(max_prompt_tokens=20).compact(store, "c", CompactRequest(
        budget=8, backend=llm, now=MON + timedelta(days=2), count=word_count))
    (digest,) = store.entries("c")
    assert len(llm.calls) == 3 and digest.text == "part one part two part three"  # 2 lines (18) per part
    assert digest.turn_ids == tuple(f"t{i}" for i in range(6)) and digest.meta["calls"] == 3
    assert len(report.calls) == 3
    assert "message number 1" in llm.calls[0][0]["content"] and "message number 2" in llm.calls[1][0]["content"]
