"""The invariant checker must catch broken chunkers (else the property tests prove nothing),
and the generators must produce what they promise."""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from datetime import timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab.chunking import Chunk, LineBudgetChunker, TurnWindowChunker, render_turns
from lyra_lab.corpus import Turn
from lyra_lab.testing import InvariantViolation, check_chunker, conversations, turns_strategy

PROPERTY = settings(max_examples=200, deadline=None)


@dataclass(frozen=True)
class Broken:
    """Wraps a good chunker and breaks one thing about its output."""

    how: str
    inner: object = LineBudgetChunker(max_chars=60)

    def budget(self):
        return self.inner.budget()

    def chunk(self, turns):
        chunks = self.inner.chunk(turns)
        if self.how == "drop_last_char" and chunks:
            last = chunks[-1]
            chunks[-1] = dataclasses.replace(last, text=last.text[:-1])
        elif self.how == "empty_chunk":
            chunks.append(Chunk(len(chunks), ""))
        elif self.how == "swap" and len(chunks) > 1:
            first, second = chunks[0], chunks[1]
            chunks[0], chunks[1] = dataclasses.replace(second, index=0), dataclasses.replace(first, index=1)
        elif self.how == "forget_turn" and chunks and chunks[0].turn_ids:
            chunks[0] = dataclasses.replace(chunks[0], turn_ids=chunks[0].turn_ids[1:])
        elif self.how == "fake_overlap" and len(chunks) > 1:
            chunks[1] = dataclasses.replace(chunks[1], text="X" + chunks[1].text, overlap_chars=1)
        elif self.how == "over_budget" and len(chunks) > 1:
            a, b = chunks[0], chunks[1]
            merged = dataclasses.replace(a, text=a.text + b.text, end=b.end,
                                         turn_ids=tuple(dict.fromkeys(a.turn_ids + b.turn_ids)),
                                         session_ids=tuple(dict.fromkeys(a.session_ids + b.session_ids)))
            chunks = [merged] + [dataclasses.replace(c, index=c.index - 1) for c in chunks[2:]]
        elif self.how == "alternating" and next(CALLS) % 2:
            chunks = [dataclasses.replace(c, tokens=(c.tokens or 0) + 1) for c in chunks]
        return chunks


CALLS = itertools.count()
TURNS = [Turn(f"t{i}", "c", "s", "user", f"message number {i} " * 2) for i in range(8)]


@pytest.mark.parametrize("how, invariant", [
    ("drop_last_char", "concatenation restores the input"),
    ("empty_chunk", "no empty chunk"),
    ("swap", "concatenation restores the input"),
    ("forget_turn", "turn_ids are the turns in the chunk"),
    ("fake_overlap", "overlap only repeats earlier text"),
    ("over_budget", "within budget"),
    ("alternating", "deterministic"),
])
def test_check_chunker_catches_each_kind_of_breakage(how, invariant):
    chunker = Broken(how)
    with pytest.raises(InvariantViolation) as caught:
        check_chunker(chunker, TURNS)
    assert caught.value.invariant.startswith(invariant), caught.value
    assert repr(chunker) in str(caught.value)


def test_check_chunker_passes_a_good_chunker_and_returns_its_chunks():
    chunks = check_chunker(TurnWindowChunker(max_turns=3), TURNS)
    assert [c.turn_ids for c in chunks] == [("t0", "t1", "t2"), ("t3", "t4", "t5"), ("t6", "t7")]


def test_invariant_violation_is_an_assertion_error():
    assert issubclass(InvariantViolation, AssertionError)


@PROPERTY
@given(conversations())
def test_conversations_have_what_they_promise(conversation):
    assert conversation.sessions and all(s.turns for s in conversation.sessions)
    turns = list(conversation.turns())
    assert len({t.id for t in turns}) == len(turns)
    stamps = [t.timestamp for t in turns]
    assert all(s.tzinfo is not None and s.utcoffset() == timezone.utc.utcoffset(None) for s in stamps)
    assert all(a < b for a, b in zip(stamps, stamps[1:]))
    assert all(t.conversation_id == conversation.id for t in turns)
    assert all(t.session_id == s.id for s in conversation.sessions for t in s.turns)


def test_generators_reach_the_edge_cases():
    seen = {"empty_line": 0, "huge": 0, "non_ascii": 0, "one_turn_session": 0, "empty": 0, "cr": 0}

    @settings(max_examples=200, deadline=None, database=None)
    @given(turns_strategy())
    def run(turns):
        text = "\n".join(t.text for t in turns)
        seen["empty"] += not turns
        seen["empty_line"] += "\n\n" in render_turns(turns) or any(not t.text for t in turns)
        seen["huge"] += any(len(line) >= 300 for line in text.split("\n"))
        seen["non_ascii"] += any(ord(ch) > 0xFFFF for ch in text)
        seen["cr"] += "\r" in text
        sessions = [t.session_id for t in turns]
        seen["one_turn_session"] += any(sessions.count(s) == 1 for s in set(sessions))

    run()
    # Hypothesis never runs the same example twice, so the one empty input counts once.
    assert seen.pop("empty") >= 1
    assert all(v >= 5 for v in seen.values()), sorted(seen.items())


@given(st.data())
@settings(max_examples=20, deadline=None)
def test_conversation_options_are_honoured(data):
    conversation = data.draw(conversations(conversation_id="fixed", min_sessions=2, max_sessions=2,
                                           max_turns_per_session=1, huge_line=False, timestamps=False))
    assert conversation.id == "fixed" and len(conversation.sessions) == 2
    assert all(len(s.turns) == 1 and s.turns[0].timestamp is None for s in conversation.sessions)
