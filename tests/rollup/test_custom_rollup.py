"""A new rollup is its compaction step: one ``step`` on ``BaseRollup``, checked by hand and by the state machine."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from hypothesis import settings

from lyra_lab.backends import FakeLLM
from lyra_lab.chunking import CHUNKERS
from lyra_lab.corpus import Conversation, Session, Turn
from lyra_lab.memory import EntryKind, MemoryEntry, MemoryStore, render_memory
from lyra_lab.recall import RECALLERS
from lyra_lab.replay import Pipeline, Registries, ReplaySetup, TRIGGERS, replay
from lyra_lab.rollup import ROLLUPS, BaseRollup, CompactRequest, Compaction, Edit, skip
from lyra_lab.summarize import SUMMARIZERS
from lyra_lab.testing import rollup_machine, word_count


@dataclass(frozen=True)
class FoldAll(BaseRollup):
    """Over budget, fold the whole memory into one note (one LLM call); drop it if it alone is over budget."""

    def step(self, compaction: Compaction) -> Edit:
        before = compaction.before
        if compaction.tokens_before <= compaction.request.budget:
            return skip("within budget")
        reply = compaction.ask("Summarize:\n" + render_memory(before), max_tokens=50)
        cid = compaction.conversation_id
        note = MemoryEntry(
            id=f"note:{cid}", conversation_id=cid, kind=EntryKind.SUMMARY, text=reply.text.strip(),
            turn_ids=tuple(sorted({t for e in before for t in e.turn_ids})),
            session_ids=tuple(sorted({s for e in before for s in e.session_ids})),
            start=min((e.start for e in before if e.start), default=None),
            end=max((e.end for e in before if e.end), default=None), level=1,
        )
        everything = [e.id for e in before]
        if compaction.tokens([note]) > compaction.request.budget:
            return Edit("the note alone is over budget: dropped", remove=everything)
        return Edit("folded into one note", add=[note], remove=everything)


T0 = datetime(2023, 5, 8, 9, 0, tzinfo=timezone.utc)


def _turns(cid: str = "c") -> list[MemoryEntry]:
    texts = ["alice likes green tea", "bob moved to porto", "the cat is called miso"]
    return [MemoryEntry.from_turn(Turn(id=f"t{i}" if cid == "c" else f"{cid}:t{i}", conversation_id=cid, session_id="s0", role="user", text=text,
                                       timestamp=T0 + timedelta(hours=i))) for i, text in enumerate(texts)]


def test_the_step_is_all_a_rollup_writes_and_the_base_reports_it():
    store = MemoryStore([*_turns(), *_turns("other")])
    # each line "[2023-05-08] user: <4 or 5 words>" is 6 or 7 words: 6 + 6 + 7 = 19 tokens by word count
    assert word_count(render_memory(store.entries("c"))) == 19
    llm = FakeLLM(respond=lambda messages: "tea porto miso")
    report = FoldAll().compact(store, "c", CompactRequest(
        budget=10, backend=llm, now=T0 + timedelta(days=1), count=word_count))
    assert render_memory(store.entries("c")) == "[2023-05-08] tea porto miso"
    assert (report.ran, report.tokens_before, report.tokens_after, report.budget) == (True, 19, 4, 10)
    assert report.folded == ("t0", "t1", "t2") and report.kept == report.dropped == ()
    assert report.digests == ("note:c",) and len(report.calls) == len(llm.calls) == 1
    assert report.reason == "folded into one note" and report.error is None
    assert len(store.entries("other")) == 3  # another conversation is never touched

    # within budget now: the step says so, the base reports it unchanged and calls no LLM
    again = FoldAll().compact(store, "c", CompactRequest(
        budget=10, backend=FakeLLM(), now=T0 + timedelta(days=2), count=word_count))
    assert (again.ran, again.reason, again.kept, again.calls) == (False, "within budget", ("t0", "t1", "t2"), ())


def test_a_failed_llm_call_changes_nothing_and_a_note_over_budget_is_dropped():
    store = MemoryStore(_turns())
    snapshot = store.dumps()
    failed = FoldAll().compact(store, "c", CompactRequest(
        budget=10, backend=FakeLLM(fail=lambda messages: True), now=T0 + timedelta(days=1), count=word_count))
    assert store.dumps() == snapshot and not failed.ran and failed.reason == "llm failed" and failed.error
    assert failed.tokens_after == failed.tokens_before == 19

    long_reply = FakeLLM(respond=lambda messages: "word " * 12)  # the note alone: 13 > 10 tokens
    dropped = FoldAll().compact(store, "c", CompactRequest(
        budget=10, backend=long_reply, now=T0 + timedelta(days=1), count=word_count))
    assert store.entries("c") == [] and dropped.dropped == ("t0", "t1", "t2") and dropped.digests == ()
    assert (dropped.ran, dropped.tokens_after, len(dropped.calls)) == (True, 0, 1)


def test_a_registered_custom_rollup_compacts_during_a_replay():
    turns = tuple(Turn(id=f"s{s}:t{i}", conversation_id="c", session_id=f"s{s}", role="user",
                       text=f"session {s} line {i} about tea", timestamp=T0 + timedelta(days=s, minutes=i))
                  for s in range(2) for i in range(3))
    conv = Conversation(id="c", sessions=tuple(
        Session(id=f"s{s}", conversation_id="c", turns=turns[3 * s:3 * s + 3]) for s in range(2)))
    registries = Registries(CHUNKERS, SUMMARIZERS, ROLLUPS.extended(fold_all=FoldAll), RECALLERS, TRIGGERS)
    pipeline = Pipeline.from_dict({"chunker": "turn_window", "rollup": "fold_all", "budget": 40}, registries)
    llm = FakeLLM(respond=lambda messages: "a short note")
    result = replay(conv, [], pipeline, ReplaySetup(llm, recallers={}))
    [note] = result.store.entries("c")
    assert note.id == "note:c" and note.text == "a short note"
    assert note.turn_ids == tuple(t.id for t in turns)  # every turn folded, none lost
    assert len(llm.calls) == 2  # the rollup ran after each session's flush


TestFoldAllMachine = rollup_machine(FoldAll(), budget=10).TestCase
TestFoldAllMachine.settings = settings(max_examples=100, stateful_step_count=15, deadline=None)
