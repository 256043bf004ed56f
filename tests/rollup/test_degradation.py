"""A rollup that cannot reach its LLM changes nothing and says so as a typed ``Degradation``.

Each rollup names the step that failed (a day digest, a session's gist, a facts
batch), why (retries spent, the deadline, an empty reply, another exception)
and after how many attempts; the store stays byte-identical.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from lyra_lab.backends import BackendError, FakeLLM
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.rollup import CompactRequest, FactExtraction, SessionGist, SummaryBuffer, TimeLadder
from lyra_lab.testing import word_count

MON = datetime(2023, 5, 8, 10, 0, tzinfo=timezone.utc)


def turn(i: int, at: datetime, session: str = "s1") -> MemoryEntry:
    return MemoryEntry(f"turn:t{i}", "c", "turn", f"user: message number {i} with some words", (f"t{i}",),
                       (session,), at, at)


def three_days() -> MemoryStore:
    stamps = [MON, MON + timedelta(hours=1), MON + timedelta(days=1), MON + timedelta(days=1, hours=2),
              MON + timedelta(days=4)]
    return MemoryStore([turn(i, t) for i, t in enumerate(stamps)])


class Raising:
    """A backend that raises ``error`` on every call."""

    name, model = "raising", "x"

    def __init__(self, error: Exception):
        self.error = error

    def complete(self, messages, **params):
        raise self.error


def compact(rollup, store, backend):
    return rollup.compact(store, "c", CompactRequest(
        budget=5, backend=backend, now=MON + timedelta(days=9), count=word_count))


def test_a_failed_digest_is_an_unchanged_degradation_naming_the_period():
    store = three_days()
    snapshot = store.dumps()
    llm = FakeLLM(fail=lambda msgs: len(llm.calls) >= 2)  # Monday's digest succeeds, Tuesday's fails
    report = compact(TimeLadder(), store, llm)
    (d,) = report.degraded
    assert store.dumps() == snapshot and not report.ran
    assert (d.metric, d.where, d.cause, d.attempts) == ("degraded.rollup.unchanged",
                                                        "time_ladder: day digest 2023-05-09", "attempts", 1)
    assert d.error == report.error and "HTTP 500" in d.error
    assert d.turn_ids == ("t0", "t1", "t2", "t3", "t4")  # the memory the rollup could not compact
    assert len(report.calls) == 1  # the paid call is still reported


@pytest.mark.parametrize("backend, cause, attempts", [
    (Raising(BackendError("b", "overloaded", status=529, attempts=8, gave_up="attempts")), "attempts", 8),
    (Raising(BackendError("b", "timed out", attempts=3, gave_up="deadline")), "deadline", 3),
    (Raising(BackendError("b", "bad request", status=400, gave_up="not_retryable")), "not_retryable", 1),
    (Raising(KeyError("boom")), "error", None),
    (FakeLLM(outputs=["   "]), "empty", None),
], ids=["attempts", "deadline", "not_retryable", "error", "empty"])
def test_the_cause_and_attempts_come_from_the_failure(backend, cause, attempts):
    store = three_days()
    snapshot = store.dumps()
    (d,) = compact(TimeLadder(), store, backend).degraded
    assert store.dumps() == snapshot
    assert (d.cause, d.attempts, d.failed_call) == (cause, attempts, cause != "empty")


def test_a_failed_facts_batch_names_the_batch_and_changes_nothing():
    store = MemoryStore([turn(i, MON + timedelta(minutes=i)) for i in range(4)])
    snapshot = store.dumps()
    llm = FakeLLM(outputs=["a: b"], fail=lambda msgs: len(llm.calls) > 1)
    report = compact(FactExtraction(batch_turns=2), store, llm)
    (d,) = report.degraded
    assert store.dumps() == snapshot
    assert (d.metric, d.where) == ("degraded.rollup.unchanged", "fact_extraction: facts batch 2/2")


def test_session_gist_and_summary_buffer_name_their_step():
    store = MemoryStore([turn(0, MON), turn(1, MON), turn(2, MON + timedelta(days=1), "s2")])
    (d,) = SessionGist(every_turns=20).compact(store, "c", CompactRequest(
        budget=1000, backend=FakeLLM(fail=lambda m: True), now=MON + timedelta(days=2), count=word_count)).degraded
    assert d.where == "session_gist: gist of session s1"
    (d,) = compact(SummaryBuffer(), store, FakeLLM(fail=lambda m: True)).degraded
    assert d.where.startswith("summary_buffer: summary fold of ")


def test_a_rollup_that_works_or_has_nothing_to_do_is_not_degraded():
    store = three_days()
    assert compact(TimeLadder(), store, FakeLLM()).degraded == ()
    assert compact(TimeLadder(), store, FakeLLM(fail=lambda m: True)).degraded == ()  # nothing left to fold
