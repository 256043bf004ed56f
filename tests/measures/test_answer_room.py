"""``AnswerRoom``: the context tokens an answerer's window leaves beside the prompt, question and answer."""

from __future__ import annotations

import math

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import token_counter
from lyra_lab.corpus import Probe
from lyra_lab.measures import ANSWER_PROMPTS, AnswerRoom
from lyra_lab.measures._answer_room import CHAT_TOKENS, SAFETY

PROBE = Probe(id="p", conversation_id="c", question="Where did Melanie go camping in June?", answer="the beach")


def test_the_room_is_the_window_less_template_answer_and_prompt_over_the_safety_factor():
    count = token_counter()
    room = AnswerRoom(window=4096, prompts=("short_v1",), max_tokens=32)
    prompt = count(ANSWER_PROMPTS["short_v1"].render(PROBE, ""))
    assert 40 < prompt < 90  # the instruction and the question, no context
    assert room.tokens(PROBE, count) == math.floor((4096 - CHAT_TOKENS - 32) / SAFETY) - prompt
    assert room.tokens(PROBE, count) == 2980 - prompt  # by hand: (4096 - 40 - 32) / 1.35 = 2980.7


def test_the_longest_prompt_and_the_largest_answer_cap_bound_it():
    count = token_counter()
    both = AnswerRoom(window=4096, prompts=("short_v1", "longmemeval"), max_tokens=32)
    assert both.answer_tokens == 500  # LongMemEval's own cap, above [qa] max_tokens
    longest = max(count(ANSWER_PROMPTS[p].render(PROBE, "")) for p in ("short_v1", "longmemeval"))
    assert both.tokens(PROBE, count) == math.floor((4096 - CHAT_TOKENS - 500) / SAFETY) - longest
    assert both.tokens(PROBE, count) < AnswerRoom(4096, ("short_v1",), 32).tokens(PROBE, count)


def test_a_longer_question_leaves_less_room_and_a_tiny_window_none():
    count = token_counter()
    room = AnswerRoom(window=2048, prompts=("short_v1",), max_tokens=16)
    longer = Probe(id="q", conversation_id="c", question=PROBE.question + " And with whom, and why?", answer="x")
    assert room.tokens(longer, count) < room.tokens(PROBE, count)
    assert AnswerRoom(window=100, prompts=("short_v1",), max_tokens=16).tokens(PROBE, count) == 0


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"window": 0, "prompts": ("short_v1",), "max_tokens": 32}, "must be positive"),
    ({"window": 4096, "prompts": (), "max_tokens": 32}, "no answer prompt"),
    ({"window": 4096, "prompts": ("short_v1",), "max_tokens": 32, "safety": 0.5}, "safety >= 1"),
    ({"window": 4096, "prompts": ("nope",), "max_tokens": 32}, "nope"),
])
def test_bad_rooms_are_refused(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        AnswerRoom(**kwargs)
