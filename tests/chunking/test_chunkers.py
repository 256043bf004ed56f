"""Example tests: rendering, each chunker on hand-made input, validation, registry, a real corpus."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from lyra_lab import ConfigError
from lyra_lab.backends import count_tokens
from lyra_lab.chunking import (
    CHUNKERS,
    AdaptiveChunker,
    ChunkPlan,
    LineBudgetChunker,
    OverlapWindowChunker,
    TokenBudgetChunker,
    Transcript,
    TurnWindowChunker,
    render_turn,
    render_turns,
)
from lyra_lab.corpus import Turn
from lyra_lab.testing import check_chunker

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)


def turn(i: int, text: str, session: str = "s1", minutes: int | None = None,
         speaker: str | None = "Ann") -> Turn:
    stamp = T0 + timedelta(minutes=i if minutes is None else minutes)
    return Turn(f"t{i}", "c1", session, "user" if i % 2 else "assistant", text, stamp, speaker)


def test_render_turn_is_one_line_per_turn_with_exactly_one_newline():
    assert render_turn(turn(0, "hi\r\nthere\r\rx\n\n")) == "[2023-05-08 13:56] Ann: hi\nthere\n\nx\n"
    assert render_turn(Turn("a", "c", "s", "user", "", None)) == "user: \n"
    assert render_turns([]) == ""


def test_transcript_maps_offsets_to_turns():
    turns = [turn(0, "ab"), turn(1, "cd\nef"), turn(2, "g")]
    tr = Transcript.of(turns)
    assert tr.text == "".join(render_turn(t) for t in turns)
    assert [t.id for t in tr.turns_in(0, 1)] == ["t0"]
    second = tr.starts[1]
    assert [t.id for t in tr.turns_in(second - 1, second + 1)] == ["t0", "t1"]
    assert [t.id for t in tr.turns_in(second, len(tr.text))] == ["t1", "t2"]
    assert tr.turns_in(3, 3) == ()


def test_line_budget_packs_lines_and_isolates_an_oversize_line():
    chunks = LineBudgetChunker(max_chars=8).chunk("ab\ncd\nefghijklmnop\nq\n")
    assert [c.text for c in chunks] == ["ab\ncd\n", "efghijklmnop\n", "q\n"]


def test_token_budget_cuts_a_huge_line_into_fitting_pieces_on_word_boundaries():
    line = " ".join(f"word{i}" for i in range(400))
    chunker = TokenBudgetChunker(max_tokens=50)
    chunks = check_chunker(chunker, [turn(0, "short"), turn(1, line), turn(2, "tail")])
    assert len(chunks) > 5
    assert all(count_tokens(c.text, "o200k_base") <= 50 for c in chunks)
    assert all(c.tokens == count_tokens(c.text, "o200k_base") for c in chunks)
    middle = [c for c in chunks if c.turn_ids == ("t1",)]
    assert middle and all(c.text.endswith(" ") or c.text.endswith("\n") for c in middle)
    assert "".join(c.text for c in chunks) == render_turns([turn(0, "short"), turn(1, line), turn(2, "tail")])


def test_token_budget_packs_close_to_the_budget():
    turns = [turn(i, f"line number {i} says something fairly ordinary") for i in range(60)]
    chunks = TokenBudgetChunker(max_tokens=200).chunk(turns)
    # Greedy packing: every chunk but the last is full enough that the next line would not fit.
    for a, b in zip(chunks, chunks[1:]):
        first_line = b.text.split("\n", 1)[0] + "\n"
        assert count_tokens(a.text + first_line, "o200k_base") > 200


def test_turn_window_breaks_on_count_and_sessions():
    turns = [turn(0, "a"), turn(1, "b"), turn(2, "c"), turn(3, "d", "s2"), turn(4, "e", "s2")]
    assert [c.turn_ids for c in TurnWindowChunker(max_turns=2).chunk(turns)] == [
        ("t0", "t1"), ("t2",), ("t3", "t4")]
    assert [c.turn_ids for c in TurnWindowChunker(max_turns=2, respect_sessions=False).chunk(turns)] == [
        ("t0", "t1"), ("t2", "t3"), ("t4",)]
    chunk = TurnWindowChunker(max_turns=2).chunk(turns)[2]
    assert chunk.session_ids == ("s2",) and chunk.start == T0 + timedelta(minutes=3)
    assert chunk.end == T0 + timedelta(minutes=4)


def test_turn_window_on_raw_text_counts_lines():
    assert [c.text for c in TurnWindowChunker(max_turns=2).chunk("a\nb\nc")] == ["a\nb\n", "c"]


def test_overlap_window_repeats_whole_lines_of_the_previous_chunk():
    turns = [turn(i, f"this is line {i} of the talk") for i in range(20)]  # ~23 tokens a line
    chunks = check_chunker(OverlapWindowChunker(max_tokens=80, overlap_tokens=30), turns)
    assert len(chunks) >= 3
    for prev, chunk in zip(chunks, chunks[1:]):
        assert chunk.overlap_chars > 0
        overlap = chunk.text[:chunk.overlap_chars]
        assert prev.text.endswith(overlap) and overlap.startswith("[2023")  # starts at a line start
        assert count_tokens(overlap, "o200k_base") <= 30
        assert set(prev.turn_ids) & set(chunk.turn_ids)  # the overlapped turn is in both


def test_overlap_shorter_than_a_line_starts_at_a_word():
    turns = [turn(i, f"this is line {i} of the talk") for i in range(20)]
    chunks = check_chunker(OverlapWindowChunker(max_tokens=60, overlap_tokens=10), turns)
    for prev, chunk in zip(chunks, chunks[1:]):
        assert 0 < chunk.overlap_chars and not chunk.text.startswith("[")  # mid-line...
        assert prev.text[-chunk.overlap_chars - 1] == " "  # ...but at a word start
        assert chunk.text[chunk.overlap_chars] == "["  # new text starts at a line
        assert count_tokens(chunk.text[:chunk.overlap_chars], "o200k_base") <= 10


def test_adaptive_decides_by_size():
    small = [turn(i, "hello") for i in range(3)]
    plan = AdaptiveChunker(target_tokens=1000).plan(small)
    assert isinstance(plan, ChunkPlan) and plan.decision == "single_pass" and len(plan) == 1
    assert "single pass" in plan.reason

    medium = [turn(i, "a sentence about the weekend plans and the garden " * 3) for i in range(40)]
    tokens = count_tokens(render_turns(medium), "o200k_base")
    plan = AdaptiveChunker(target_tokens=tokens + 10, min_chunk_chars=500).plan(medium)
    assert plan.decision == "preemptive" and len(plan) == 3
    sizes = [len(c.text) for c in plan]
    assert max(sizes) - min(sizes) < 0.25 * sum(sizes) / 3  # balanced
    assert all(c.text.startswith("[2023") for c in plan)  # cut at turn starts
    # The same size but a higher character floor: not worth splitting.
    plan = AdaptiveChunker(target_tokens=tokens + 10, min_chunk_chars=10**6).plan(medium)
    assert plan.decision == "single_pass"

    plan = AdaptiveChunker(target_tokens=tokens // 3).plan(medium)
    assert plan.decision == "oversize" and len(plan) >= 3
    assert all(c.tokens <= tokens // 3 for c in plan)
    assert AdaptiveChunker().chunk(medium) == list(AdaptiveChunker().plan(medium))


def test_empty_input_gives_no_chunks():
    for name in CHUNKERS.names():
        chunker = CHUNKERS.build(name)
        assert chunker.chunk([]) == [] and chunker.chunk("") == []
    assert AdaptiveChunker().plan([]).decision == "single_pass"


@pytest.mark.parametrize("spec, problem", [
    ({"name": "line_budget", "max_chars": 0}, "max_chars"),
    ({"name": "token_budget", "max_tokens": -5}, "max_tokens"),
    ({"name": "token_budget", "encoding": "r50k_nonsense"}, "encoding"),
    ({"name": "turn_window", "max_turns": 2.5}, "max_turns"),
    ({"name": "turn_window", "respect_sessions": "yes"}, "respect_sessions"),
    ({"name": "overlap_window", "max_tokens": 100, "overlap_tokens": 100}, "overlap_tokens"),
    ({"name": "adaptive", "ratio": 1.5}, "ratio"),
    ({"name": "adaptive", "target_chunk": 3}, "target_chunk"),
    ({"name": "sentence_split"}, "sentence_split"),
])
def test_bad_specs_raise_config_errors_naming_the_problem(spec, problem):
    with pytest.raises(ConfigError, match=problem):
        CHUNKERS.build(spec)


def test_specs_round_trip_through_the_registry():
    for name in CHUNKERS.names():
        chunker = CHUNKERS.build(name)
        assert CHUNKERS.build(CHUNKERS.spec(chunker)) == chunker
        assert hash(chunker) == hash(CHUNKERS.build(name))


def test_chunk_takes_a_session_or_a_conversation_too():
    from lyra_lab.corpus import Conversation, Session

    session = Session("s1", "c1", tuple(turn(i, f"x{i}") for i in range(3)))
    chunker = TurnWindowChunker(max_turns=2)
    assert chunker.chunk(session) == chunker.chunk(list(session.turns))
    assert chunker.chunk(Conversation("c1", (session,))) == chunker.chunk(list(session.turns))


def test_chunk_rejects_something_that_is_not_turns():
    with pytest.raises(TypeError, match="item 0"):
        LineBudgetChunker().chunk([{"text": "hi"}])


def test_every_chunker_on_a_real_locomo_conversation():
    from lyra_lab.corpus import load
    from tests.helpers.locomo import locomo_path

    path = locomo_path()

    turns = list(load(path).conversations[0].turns())
    for name in CHUNKERS.names():
        chunks = check_chunker(CHUNKERS.build(name), turns, check_text_input=False)
        assert chunks and {t for c in chunks for t in c.turn_ids} == {t.id for t in turns}
    plan = AdaptiveChunker().plan(turns)
    assert plan.decision == "oversize" and all(c.tokens <= AdaptiveChunker().target_tokens for c in plan)
