"""Budgeted rollups checked as hypothesis state machines against a keep-everything model."""

from __future__ import annotations

from hypothesis import settings

from lyra_lab.backends import token_counter
from lyra_lab.rollup import SummaryBuffer, TimeLadder
from lyra_lab.testing import rollup_machine

MACHINE_SETTINGS = settings(max_examples=200, stateful_step_count=20, deadline=None)

TestTimeLadderMachine = rollup_machine(TimeLadder(), budget=15).TestCase
TestTimeLadderMachine.settings = MACHINE_SETTINGS

# Short rungs so that week and month digests happen within a few steps.
TestShortLadderMachine = rollup_machine(
    TimeLadder(headroom=1.0, day_after_days=0, week_after_days=2, month_after_days=9), budget=25
).TestCase
TestShortLadderMachine.settings = MACHINE_SETTINGS

TestSummaryBufferMachine = rollup_machine(SummaryBuffer(max_tokens=20), budget=10).TestCase
TestSummaryBufferMachine.settings = MACHINE_SETTINGS

TestSummaryBufferLimitMachine = rollup_machine(SummaryBuffer(max_buffer_tokens=15, max_tokens=20), budget=60).TestCase
TestSummaryBufferLimitMachine.settings = MACHINE_SETTINGS

# The real BPE counter, fewer examples (it is slower than counting words).
TestTimeLadderBpeMachine = rollup_machine(TimeLadder(), budget=30, count=token_counter("gpt-4o-mini")).TestCase
TestTimeLadderBpeMachine.settings = settings(max_examples=50, stateful_step_count=15, deadline=None)

# Periods summarized in several parts (a small-context model).
TestSplitLadderMachine = rollup_machine(
    TimeLadder(headroom=1.0, day_after_days=0, week_after_days=1, month_after_days=5, max_prompt_tokens=10),
    budget=20,
).TestCase
TestSplitLadderMachine.settings = MACHINE_SETTINGS
