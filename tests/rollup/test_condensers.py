"""Summary buffer, session gists and fact extraction on hand-built stores."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from lyra_lab.backends import FakeLLM
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.rollup import CompactRequest, FactExtraction, SessionGist, SummaryBuffer, parse_facts, render_memory
from lyra_lab.testing import word_count

T0 = datetime(2023, 5, 8, 9, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=3)


def turn(i: int, session: str = "s1", text: str = "") -> MemoryEntry:
    t = T0 + timedelta(minutes=i)
    return MemoryEntry(f"turn:t{i}", "c", "turn", text or f"user: turn {i} words here", (f"t{i}",),
                       (session,), t, t)


def test_summary_buffer_keeps_newest_turns_and_grows_one_running_summary():
    store, sb = MemoryStore([turn(i) for i in range(6)]), SummaryBuffer(max_buffer_tokens=12, max_tokens=50)
    # each line "[2023-05-08] user: turn i words here" is 6 words; 12 words hold the 2 newest turns
    report = sb.compact(store, "c", CompactRequest(
        budget=100, backend=FakeLLM(outputs=["first summary"]), now=NOW, count=word_count))
    (summary,) = store.entries("c", kind="summary")
    assert summary.text == "first summary" and summary.turn_ids == ("t0", "t1", "t2", "t3")
    assert [e.id for e in store.entries("c", kind="turn")] == ["turn:t4", "turn:t5"]
    assert set(report.folded) == {"t0", "t1", "t2", "t3"} and set(report.kept) == {"t4", "t5"}
    store.add([turn(6), turn(7)])
    llm = FakeLLM(outputs=["second summary"])
    sb.compact(store, "c", CompactRequest(budget=100, backend=llm, now=NOW, count=word_count))
    (summary,) = store.entries("c", kind="summary")
    assert summary.text == "second summary" and summary.turn_ids == tuple(f"t{i}" for i in range(6))
    assert summary.meta["folds"] == 2 and "first summary" in llm.calls[0][0]["content"]
    assert render_memory(store.entries("c")).startswith("[2023-05-08] second summary\n")


def test_summary_buffer_holds_the_whole_memory_under_budget():
    store = MemoryStore([turn(i) for i in range(10)])
    report = SummaryBuffer(max_tokens=20).compact(store, "c", CompactRequest(
        budget=20, backend=FakeLLM(outputs=["s1 s2 s3"]), now=NOW, count=word_count))
    assert report.ran and word_count(render_memory(store.entries("c"))) <= 20


def test_session_gist_replaces_the_gist_after_n_new_turns_and_keeps_raw_turns():
    store = MemoryStore([turn(i) for i in range(3)] + [turn(10, "s2")])
    sg = SessionGist(every_turns=3, gist_closed_sessions=False)
    llm = FakeLLM(outputs=["gist one"])
    sg.compact(store, "c", CompactRequest(budget=1000, backend=llm, now=NOW, count=word_count))
    (gist,) = store.entries("c", kind="gist")
    assert (gist.id, gist.text, gist.turn_ids, gist.session_ids) == ("gist:c:s1", "gist one",
                                                                    ("t0", "t1", "t2"), ("s1",))
    assert len(llm.calls) == 1 and len(store.entries("c", kind="turn")) == 4  # s2 has too few turns
    store.add([turn(3), turn(4)])
    report = sg.compact(store, "c", CompactRequest(budget=1000, backend=FakeLLM(), now=NOW, count=word_count))
    assert not report.ran  # only 2 new turns in s1
    store.add(turn(5))
    llm = FakeLLM(outputs=["gist two"])
    sg.compact(store, "c", CompactRequest(budget=1000, backend=llm, now=NOW, count=word_count))
    (gist,) = store.entries("c", kind="gist")
    assert gist.text == "gist two" and gist.turn_ids == tuple(f"t{i}" for i in range(6))
    prompt = llm.calls[0][0]["content"]
    assert "gist one" in prompt and "turn 5" in prompt and "turn 1 " not in prompt  # refine, not re-read


def test_session_gist_gives_a_closed_session_its_final_gist():
    store = MemoryStore([turn(0), turn(1), turn(10, "s2")])
    llm = FakeLLM(outputs=["short session gist"])
    report = SessionGist(every_turns=20).compact(store, "c", CompactRequest(
        budget=1000, backend=llm, now=NOW, count=word_count))
    # s1 is over (s2 began later): gisted with 2 turns; s2 is the latest session: it waits for 20.
    assert [g.id for g in store.entries("c", kind="gist")] == ["gist:c:s1"] and len(llm.calls) == 1
    assert report.digests == ("gist:c:s1",)
    again = SessionGist(every_turns=20).compact(store, "c", CompactRequest(
        budget=1000, backend=FakeLLM(), now=NOW, count=word_count))
    assert not again.ran  # nothing new: nothing to do


def test_fact_extraction_dedups_and_supersedes_by_subject():
    store = MemoryStore([turn(i) for i in range(4)])
    fe = FactExtraction(batch_turns=2)
    llm = FakeLLM(outputs=["- Alice job: nurse\n- Alice pet: a cat named Luna", "1. alice job: NURSE!"])
    fe.compact(store, "c", CompactRequest(budget=1000, backend=llm, now=NOW, count=word_count))
    facts = {f.meta["subject"]: f for f in store.entries("c", kind="fact")}
    assert set(facts) == {"alice job", "alice pet"} and len(llm.calls) == 2  # the duplicate was skipped
    assert facts["alice job"].turn_ids == ("t0", "t1")
    old_job = facts["alice job"].id
    store.add([turn(4), turn(5), turn(6)])
    llm = FakeLLM(outputs=["Alice job: works as a pilot now\nNONE"])
    report = fe.compact(store, "c", CompactRequest(budget=1000, backend=llm, now=NOW, count=word_count))
    assert len(llm.calls) == 1  # one full batch (t4, t5); t6 waits
    assert "turn 2 " not in llm.calls[0][0]["content"]  # the watermark skips processed turns
    facts = {f.meta["subject"]: f for f in store.entries("c", kind="fact")}
    assert facts["alice job"].text == "Alice job: works as a pilot now"
    assert facts["alice job"].turn_ids == ("t4", "t5") and facts["alice job"].meta["supersedes"] == [old_job]
    assert old_job not in store and "superseded" in report.reason


def test_fact_extraction_failure_changes_nothing():
    store = MemoryStore([turn(i) for i in range(4)])
    snapshot = store.dumps()
    llm = FakeLLM(outputs=["a: b"], fail=lambda msgs: len(llm.calls) > 1)
    report = FactExtraction(batch_turns=2).compact(store, "c", CompactRequest(
        budget=10, backend=llm, now=NOW, count=word_count))
    assert store.dumps() == snapshot and report.error and len(llm.calls) == 2


def test_parse_facts_reads_bullets_numbers_and_plain_lines():
    assert parse_facts("* Bob: likes jazz\n\n3) Bob home: Paris\nnone\njust a line\n: no subject") == [
        ("bob", "Bob: likes jazz"), ("bob home", "Bob home: Paris"), (None, "just a line"),
        (None, ": no subject")]
