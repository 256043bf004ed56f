"""With raw turns kept and no summarizer, a chunk that is one whole turn is not stored (nor embedded) twice."""

from __future__ import annotations

from datetime import datetime, timezone

from lyra_lab.backends import FakeLLM
from lyra_lab.corpus import Conversation, Session, Turn
from lyra_lab.replay import Pipeline, ReplaySetup, replay

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def conversation() -> Conversation:
    texts = ["hello there\r\nfriend", "my dog is called Biscuit", "ok", "a long paste " * 600]
    turns = tuple(Turn(f"t{i}", "c", "s", "user", text, T0) for i, text in enumerate(texts))
    return Conversation("c", (Session("s", "c", turns, T0),))


def kinds(chunker: dict, keep_raw: bool = True) -> list[str]:
    pipeline = Pipeline.from_dict({"chunker": chunker, "keep_raw": keep_raw})
    result = replay(conversation(), [], pipeline, ReplaySetup(FakeLLM()))
    return [entry.id.split(":")[0] for entry in result.store.entries("c")]


def test_one_turn_chunks_beside_raw_turns_are_not_written_each_turn_is_in_memory_once():
    assert kinds({"name": "turn_window", "max_turns": 1}) == ["turn"] * 4


def test_without_raw_turns_the_one_turn_chunks_are_the_memory():
    assert kinds({"name": "turn_window", "max_turns": 1}, keep_raw=False) == ["chunk"] * 4


def test_chunks_of_several_turns_and_pieces_of_a_long_turn_are_kept():
    entries = kinds({"name": "token_budget", "max_tokens": 100})
    assert entries[:4] == ["turn"] * 4 and entries.count("chunk") > 3  # the long paste's pieces are chunks
    assert kinds({"name": "turn_window", "max_turns": 2}) == ["turn"] * 4 + ["chunk"] * 2
