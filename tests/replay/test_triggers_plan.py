"""Triggers fire when they should, and the replay schedule keeps the virtual clock's order."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab._registry import ConfigError
from lyra_lab.replay import TRIGGERS, EveryTurns, IdleGap, SessionEnd, clock_order, plan
from lyra_lab.replay._plan import SYNTHETIC_EPOCH
from lyra_lab.testing import conversations



def flush_windows(steps):
    return [[t.id for t in s.turns] for s in steps if s.kind == "flush"]


def test_session_end_fires_at_each_session_boundary_and_at_the_end(build):
    conv = build.conversation([[0, 0.1, 0.2], [24, 24.1], [48]])
    assert flush_windows(plan(conv, [], SessionEnd())) == [
        ["c1:s0:t0", "c1:s0:t1", "c1:s0:t2"], ["c1:s1:t0", "c1:s1:t1"], ["c1:s2:t0"]]


def test_every_turns_ignores_sessions_and_flushes_the_remainder_at_the_end(build):
    conv = build.conversation([[0, 0.1, 0.2], [24, 24.1], [48]])
    windows = flush_windows(plan(conv, [], EveryTurns(n=2)))
    assert [len(w) for w in windows] == [2, 2, 2]
    assert windows[1] == ["c1:s0:t2", "c1:s1:t0"]  # crosses the session boundary
    windows = flush_windows(plan(conv, [], EveryTurns(n=4)))
    assert [len(w) for w in windows] == [4, 2]


def test_idle_gap_fires_only_on_a_gap_of_at_least_the_given_hours(build):
    # gaps: 0.1h, 5.9h, 6h, 30h
    conv = build.conversation([[0, 0.1, 6.0], [12.0], [42.0]])
    windows = flush_windows(plan(conv, [], IdleGap(hours=6)))
    assert windows == [["c1:s0:t0", "c1:s0:t1", "c1:s0:t2"], ["c1:s1:t0"], ["c1:s2:t0"]]
    # a larger threshold merges the first two windows
    assert len(flush_windows(plan(conv, [], IdleGap(hours=7)))) == 2


def test_triggers_are_registered_and_validate_their_parameters():
    assert TRIGGERS.build({"name": "every_turns", "n": 5}) == EveryTurns(5)
    assert TRIGGERS.build("idle_gap") == IdleGap()
    for bad in ({"name": "every_turns", "n": 0}, {"name": "idle_gap", "hours": -1}, {"name": "every_turns", "x": 1}):
        with pytest.raises(ConfigError):
            TRIGGERS.build(bad)


def test_turns_are_fed_in_timestamp_order_and_untimed_turns_carry_the_previous_time(build):
    conv = build.conversation([[5, 6], [1, 2]])  # second session happened first
    ordered = clock_order(conv)
    assert [t.id for t in ordered] == ["c1:s1:t0", "c1:s1:t1", "c1:s0:t0", "c1:s0:t1"]
    s0 = conv.sessions[0]
    untimed = dataclasses.replace(s0, turns=(s0.turns[0], dataclasses.replace(s0.turns[1], timestamp=None)))
    conv2 = dataclasses.replace(conv, sessions=(untimed,))
    assert [t.timestamp for t in clock_order(conv2)] == [build.T0 + timedelta(hours=5)] * 2


def test_a_conversation_without_timestamps_gets_a_synthetic_clock_in_source_order(build):
    conv = build.conversation([[0, 1, 2]])
    s = conv.sessions[0]
    bare = dataclasses.replace(conv, sessions=(dataclasses.replace(
        s, turns=tuple(dataclasses.replace(t, timestamp=None) for t in s.turns)),))
    stamps = [t.timestamp for t in clock_order(bare)]
    assert stamps == [SYNTHETIC_EPOCH + timedelta(seconds=i) for i in range(3)]


def test_probes_are_asked_before_the_first_turn_at_or_after_asked_at(build):
    conv = build.conversation([[0, 1], [10, 11]])
    probes = [build.probe("late", None), build.probe("at10", 10), build.probe("mid", 5), build.probe("after", 99)]
    steps = plan(conv, probes, SessionEnd())
    order = [(s.kind, s.probe.id if s.probe else (s.turn.id if s.turn else s.seq)) for s in steps]
    assert order == [
        ("turn", "c1:s0:t0"), ("turn", "c1:s0:t1"), ("flush", 0),
        ("probe", "mid"), ("probe", "at10"),  # both before the turn at hour 10
        ("turn", "c1:s1:t0"), ("turn", "c1:s1:t1"), ("flush", 1),
        ("probe", "after"), ("probe", "late"),
    ]
    nows = {s.probe.id: s.now for s in steps if s.kind == "probe"}
    assert nows["mid"] == build.T0 + timedelta(hours=5)
    assert nows["after"] == build.T0 + timedelta(hours=99)
    assert nows["late"] == build.T0 + timedelta(hours=11)  # the end of the conversation


@settings(max_examples=200, deadline=None)
@given(conv=conversations(), trigger=st.sampled_from([SessionEnd(), EveryTurns(1), EveryTurns(3), IdleGap(1.0)]))
def test_every_turn_is_fed_once_and_flushed_once_in_clock_order(conv, trigger):
    steps = plan(conv, [], trigger)
    fed = [s.turn.id for s in steps if s.kind == "turn"]
    flushed = [tid for w in flush_windows(steps) for tid in w]
    ordered = [t.id for t in clock_order(conv)]
    assert fed == ordered == flushed
    assert sorted(fed) == sorted(t.id for t in conv.turns())
    nows = [s.now for s in steps]
    assert nows == sorted(nows)  # the clock never goes back
    # a flush happens right after the turn that closes its window, at that turn's time
    for i, s in enumerate(steps):
        if s.kind == "flush":
            assert steps[i - 1].kind == "turn" and steps[i - 1].turn.id == s.turns[-1].id
            assert s.now == s.turns[-1].timestamp
    assert steps[-1].kind == "flush"
