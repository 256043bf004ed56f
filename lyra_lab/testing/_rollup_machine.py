"""A hypothesis state machine that checks a budgeted rollup against a keep-everything model.

Rules add turns (the virtual clock advancing by minutes to weeks), compact
with a working fake LLM, and compact with a fake LLM that fails after a few
calls.  The reference model keeps every turn ever added, so the machine can
check, after every step:

- every source turn is accounted for exactly once: in exactly one memory entry
  (kept, or folded into an entry that names it) or reported dropped —
  cumulatively over all compactions;
- after a working compaction the rendered memory fits ``budget`` (when it ran)
  and always fits ``budget * headroom``;
- a failed LLM changes nothing (``store.dumps()`` byte-identical) and the
  report says ``error``; compacting again with nothing new changes nothing;
- period keys agree with the timestamps of the entries and of the turns they cover;
- other conversations in the store are never touched.

Use it for your own rollup::

    TestMyRollup = rollup_machine(MyRollup(), budget=60).TestCase
    TestMyRollup.settings = settings(max_examples=200, stateful_step_count=20, deadline=None)
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Callable, Protocol, runtime_checkable

from hypothesis import event, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from lyra_lab.backends import FakeLLM
from lyra_lab.corpus import Turn
from lyra_lab.memory import EntryKind, MemoryEntry, MemoryStore, render_memory
from lyra_lab.rollup import CompactRequest, Rollup, in_period, period_grain, period_key
from lyra_lab.testing._chunk_invariants import InvariantViolation
from lyra_lab.testing._conversations import turn_texts

CID = "conv"
OTHER = "other-conv"
_T0 = datetime(2023, 5, 8, 9, 0, tzinfo=timezone.utc)
_GAPS = st.one_of(
    st.timedeltas(min_value=timedelta(minutes=1), max_value=timedelta(hours=2)),
    st.timedeltas(min_value=timedelta(hours=2), max_value=timedelta(weeks=3)),
)


def word_count(text: str) -> int:
    """A cheap token counter (whitespace words) for fast property tests."""
    return len(text.split())


@runtime_checkable
class WithHeadroom(Protocol):
    """A rollup that only compacts above ``budget * headroom`` (``time_ladder``): the machine allows that slack."""

    @property
    def headroom(self) -> float: ...


def rollup_machine(rollup: Rollup, *, budget: int = 60,
                   count: Callable[[str], int] = word_count) -> type[RuleBasedStateMachine]:
    """A ``RuleBasedStateMachine`` class checking ``rollup`` (run it via its ``.TestCase``)."""
    headroom = float(rollup.headroom) if isinstance(rollup, WithHeadroom) else 1.0

    def fail(invariant: str, detail: str) -> InvariantViolation:
        return InvariantViolation(rollup, f"rollup: {invariant}", detail)

    class RollupMachine(RuleBasedStateMachine):
        @initialize()
        def start(self) -> None:
            self.store = MemoryStore()
            self.clock = _T0
            self.n = 0
            self.session = 0
            self.turn_time: dict[str, datetime] = {}  # the reference model: every turn ever added
            self.dropped: set[str] = set()
            self.other = ""

        def _turn(self, cid: str, gap: timedelta, text: str) -> MemoryEntry:
            if gap > timedelta(hours=2):
                self.session += 1
            self.clock += gap
            self.n += 1
            turn = Turn(id=f"{cid}:t{self.n}", conversation_id=cid, session_id=f"{cid}:s{self.session}",
                        role="user" if self.n % 2 else "assistant", text=text, timestamp=self.clock)
            return MemoryEntry.from_turn(turn)

        @rule(gaps=st.lists(_GAPS, min_size=1, max_size=6), data=st.data())
        def add_turns(self, gaps: list[timedelta], data: st.DataObject) -> None:
            entries = [self._turn(CID, g, data.draw(turn_texts(max_lines=2))) for g in gaps]
            self.store.add(entries)
            self.turn_time.update({e.turn_ids[0]: e.end for e in entries})  # type: ignore[misc]

        @rule(gap=_GAPS)
        def add_other_conversation_turn(self, gap: timedelta) -> None:
            self.store.add(self._turn(OTHER, gap, "a turn of another conversation"))
            self.other = _dump(self.store, OTHER)

        @rule(after=st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=40)),
              reply_words=st.integers(1, 12))
        def compact(self, after: timedelta, reply_words: int) -> None:
            self.clock += after
            llm = FakeLLM(respond=lambda msgs: " ".join(["digest"] * reply_words))
            report = rollup.compact(self.store, CID,
                                    CompactRequest(budget=budget, backend=llm, now=self.clock, count=count))
            if report.error is not None:
                raise fail("error reported", f"a working LLM gave error {report.error!r}")
            tokens = count(render_memory(self.store.entries(CID)))
            if report.ran and tokens > budget:
                raise fail("within budget", f"memory has {tokens} tokens after compaction, budget {budget}")
            if tokens > budget * headroom:
                limit = f"budget x headroom {budget * headroom:g}" if headroom != 1.0 else f"budget {budget}"
                raise fail("within budget", f"memory has {tokens} tokens > {limit}")
            if report.tokens_after != tokens:
                raise fail("honest report", f"report says {report.tokens_after} tokens after, memory has {tokens}")
            present = _turn_ids(self.store)
            if set(report.dropped) & present:
                back = sorted(set(report.dropped) & present)[:5]
                raise fail("honest report", f"turns reported dropped are still in memory: {back}")
            if set(report.kept) | set(report.folded) != present:
                raise fail("honest report", "report's kept + folded differ from the turns in memory")
            self.dropped |= set(report.dropped)
            event(f"compact: {report.reason}")
            for level in sorted({e.level for e in self.store.entries(CID) if e.kind != EntryKind.TURN}):
                event(f"memory holds level-{level} entries")
            # Compacting again with nothing new changes nothing (and calls no LLM).
            snapshot, idle = self.store.dumps(), FakeLLM()
            again = rollup.compact(self.store, CID,
                                   CompactRequest(budget=budget, backend=idle, now=self.clock, count=count))
            if self.store.dumps() != snapshot or again.dropped or idle.calls:
                raise fail("idempotent", "compacting again with nothing new changed the memory or called the LLM")

        @rule(fail_after=st.integers(0, 3), after=st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=40)))
        def compact_with_failing_llm(self, fail_after: int, after: timedelta) -> None:
            self.clock += after
            llm = FakeLLM(fail=lambda msgs: len(llm.calls) > fail_after)
            snapshot = self.store.dumps()
            report = rollup.compact(self.store, CID,
                                    CompactRequest(budget=budget, backend=llm, now=self.clock, count=count))
            failed = len(llm.calls) > fail_after
            event(f"failing LLM: {'failed' if failed else 'not reached'}")
            if failed and self.store.dumps() != snapshot:
                raise fail("no half-commit", "an LLM failure left the memory changed (half-commit)")
            if failed and report.error is None:
                raise fail("error reported", "an LLM failure was not reported in report.error")
            self.dropped |= set(report.dropped)

        @invariant()
        def every_turn_accounted_for_once(self) -> None:
            if not hasattr(self, "store"):
                return
            seen: dict[str, str] = {}
            for entry in self.store.entries(CID):
                for tid in entry.turn_ids:
                    if tid in seen:
                        raise fail("each turn once", f"turn {tid} is in both {seen[tid]} and {entry.id}")
                    seen[tid] = entry.id
            if set(seen) & self.dropped:
                raise fail("each turn once", f"dropped turns are back in memory: {sorted(set(seen) & self.dropped)[:5]}")
            if set(seen) | self.dropped != set(self.turn_time):
                lost = set(self.turn_time) - set(seen) - self.dropped
                raise fail("each turn once", f"turns lost without being reported dropped: {sorted(lost)[:5]}; "
                           f"unknown: {sorted(set(seen) - set(self.turn_time))[:5]}")

        @invariant()
        def periods_agree_with_timestamps(self) -> None:
            if not hasattr(self, "store"):
                return
            for entry in self.store.entries(CID):
                if entry.period is None:
                    continue
                grain = period_grain(entry.period)
                stamps = [self.turn_time[t] for t in entry.turn_ids]
                if entry.start is None or entry.end is None or {period_key(entry.start, grain),
                                                                 period_key(entry.end, grain)} != {entry.period}:
                    raise fail("inside its period",
                               f"{entry.id}: start/end {entry.start}..{entry.end} not in period {entry.period}")
                if not all(in_period(ts, entry.period) for ts in stamps):
                    raise fail("inside its period", f"{entry.id} covers turns outside its period {entry.period}")
                if entry.start != min(stamps) or entry.end != max(stamps):
                    raise fail("inside its period", f"{entry.id}: start/end are not its turns' first/last timestamps")

        @invariant()
        def other_conversations_untouched(self) -> None:
            if hasattr(self, "store") and _dump(self.store, OTHER) != self.other:
                raise fail("conversations isolated", "a compaction of one conversation changed another")

    RollupMachine.__name__ = RollupMachine.__qualname__ = f"{type(rollup).__name__}Machine"
    return RollupMachine


def _turn_ids(store: MemoryStore) -> set[str]:
    return {t for e in store.entries(CID) for t in e.turn_ids}


def _dump(store: MemoryStore, cid: str) -> str:
    return MemoryStore(store.entries(cid)).dumps()
