"""Property tests: for any chunks and any pattern of failing calls, each summarizer's record adds up."""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab.backends import BackendError, FakeLLM
from lyra_lab.chunking import TurnWindowChunker
from lyra_lab.summarize import MapReduceSummarizer, RefineSummarizer, SinglePassSummarizer
from lyra_lab.testing import turns_strategy

PROPERTY = settings(max_examples=200, deadline=None)


class ScriptedFake(FakeLLM):
    """Fails exactly the calls whose 0-based position is in ``failing``."""

    def __init__(self, failing: set[int]):
        self.position = 0
        super().__init__(fail=self._fails)
        self.failing = failing

    def _fails(self, messages) -> bool:
        position, self.position = self.position, self.position + 1
        return position in self.failing


@st.composite
def chunk_lists(draw):
    turns = draw(turns_strategy(max_sessions=3, max_turns_per_session=4, huge_line=False))
    return TurnWindowChunker(max_turns=draw(st.integers(1, 4))).chunk(turns)


def expected_turn_ids(chunks):
    return tuple(dict.fromkeys(t for c in chunks for t in c.turn_ids))


def stages_are_well_formed(events, n, merge: bool):
    stages = [e.stage for e in events]
    assert stages[:2] == ["load", "strategy"] and stages[-1] == "complete"
    assert stages.count("chunk_done") == n and stages.count("complete") == 1
    assert stages.count("merge_started") == stages.count("merge_done") == int(merge)


@PROPERTY
@given(chunks=chunk_lists(), data=st.data())
def test_map_reduce_accounts_for_every_failure(chunks, data):
    n = len(chunks)
    failing_chunks = data.draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n), label="failing chunks")
    merge_fails = data.draw(st.booleans(), label="merge fails")
    failing = failing_chunks | ({n} if merge_fails else set())  # with concurrency 1, call k is chunk k
    llm, events = ScriptedFake(failing), []
    summarizer = MapReduceSummarizer(max_concurrency=1)
    if n and len(failing_chunks) == n:
        with pytest.raises(BackendError, match=f"all {n} chunk calls failed"):
            summarizer.summarize(chunks, llm, on_event=events.append)
        stages_are_well_formed(events, n, merge=False)
        return
    summary = summarizer.summarize(chunks, llm, on_event=events.append)
    merged = n > 1
    assert len(llm.calls) == n + merged
    assert len(summary.calls) == n - len(failing_chunks) + (merged and not merge_fails)
    assert len(summary.errors) == len(failing_chunks) + (merged and merge_fails)
    assert summary.partial == bool(summary.errors)
    assert summary.turn_ids == expected_turn_ids(chunks)
    assert [e.ok for e in events if e.stage == "chunk_done"] == [i not in failing_chunks for i in range(n)]
    stages_are_well_formed(events, n, merge=merged)
    assert events[-1].ok == (not summary.partial)


@PROPERTY
@given(chunks=chunk_lists(), data=st.data())
def test_refine_accounts_for_every_failure(chunks, data):
    n = len(chunks)
    failing = data.draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n), label="failing steps")
    llm, events = ScriptedFake(failing), []
    if n and len(failing) == n:
        with pytest.raises(BackendError):
            RefineSummarizer().summarize(chunks, llm, on_event=events.append)
        stages_are_well_formed(events, n, merge=False)
        return
    summary = RefineSummarizer().summarize(chunks, llm, on_event=events.append)
    assert len(llm.calls) == n and len(summary.calls) == n - len(failing)
    assert len(summary.errors) == len(failing) and summary.partial == bool(failing)
    assert summary.turn_ids == expected_turn_ids(chunks)
    stages_are_well_formed(events, n, merge=False)


@PROPERTY
@given(chunks=chunk_lists(), fails=st.booleans())
def test_single_pass_makes_one_call_or_raises(chunks, fails):
    llm = FakeLLM(fail=lambda m: fails)
    if chunks and fails:
        with pytest.raises(BackendError):
            SinglePassSummarizer().summarize(chunks, llm)
        return
    summary = SinglePassSummarizer().summarize(chunks, llm)
    assert len(llm.calls) == len(summary.calls) == (1 if chunks else 0)
    assert summary.turn_ids == expected_turn_ids(chunks) and not summary.partial


class CountingFake(FakeLLM):
    def __init__(self):
        super().__init__()
        self.in_flight = self.peak = 0
        self.lock = threading.Lock()

    def complete(self, messages, **params):
        with self.lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            time.sleep(0.002)
            return super().complete(messages, **params)
        finally:
            with self.lock:
                self.in_flight -= 1


@settings(max_examples=100, deadline=None)
@given(chunks=chunk_lists(), bound=st.integers(1, 5))
def test_map_reduce_never_exceeds_its_concurrency_bound(chunks, bound):
    llm = CountingFake()
    summary = MapReduceSummarizer(max_concurrency=bound).summarize(chunks, llm)
    assert llm.peak <= bound
    assert len(summary.calls) == len(chunks) + (len(chunks) > 1) and not summary.partial
