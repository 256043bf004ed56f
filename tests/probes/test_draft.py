"""draft_probes with a queued FakeLLM: every kind of bad draft is dropped and counted; good ones are kept."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

import lyra_lab
from lyra_lab.backends import FakeLLM
from lyra_lab.corpus import Conversation, Corpus, Session, Turn
from lyra_lab.probes import PROMPT_NAME, REASONS, draft_probes, is_local_endpoint, parse_drafts, save_probes
from lyra_lab.probes._checks import (
    BAD_IDS,
    COPIED,
    DUPLICATE,
    GIVEN_AWAY,
    NO_JSON,
    UNPARSEABLE,
    UNSUPPORTED,
    parse_qa,
)
from lyra_lab.probes._draft import fact_turns

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
TEXTS = ["My sister Ines is moving to Lisbon in June for her new job.",
         "That's exciting! Will you visit her there?",
         "Yes, I booked flights for the 14th of July. I also decided to quit coffee.",
         "Good luck with the coffee, the first week is the hardest."]


def one_session_corpus() -> Corpus:
    turns = tuple(Turn(id=f"m{i}", conversation_id="me", session_id="s1", role="user" if i % 2 == 0 else "assistant",
                       text=text, timestamp=T0 + timedelta(minutes=i)) for i, text in enumerate(TEXTS))
    return Corpus(name="me", conversations=(Conversation(id="me", sessions=(Session("s1", "me", turns),)),))


def line(question, answer, turns, kind=None):
    return json.dumps({"question": question, "answer": answer, "turns": turns, "kind": kind})


def test_bad_drafts_are_dropped_and_counted_and_good_ones_kept(tmp_path):
    reply = "\n".join([
        line("Where is my sister moving?", "Lisbon", [1], "plan"),            # kept
        line("When did I book flights for?", "14th of July", [3]),            # kept
        line("What is my sister's name?", "Ines", [7]),                       # no turn 7
        line("Which drink did I decide to quit?", "tea", [3]),                # not in evidence
        line("Did I decide to quit coffee?", "quit coffee", [3]),             # given away
        line("Where is my sister moving to?", "Lisbon", [1]),                 # near-duplicate
        '{"question": "What?"}',                                              # no answer
        "here are some questions {not json}",                                 # not JSON
    ])
    llm = FakeLLM([reply])
    result = draft_probes(one_session_corpus(), llm, n=10, sessions=5)
    assert len(llm.calls) == 1 == result.calls
    assert "[1] user: My sister Ines" in llm.calls[0][0]["content"]
    assert [(p.question, p.answer, p.evidence) for p in result.probes] == [
        ("Where is my sister moving?", "Lisbon", ("m0",)), ("When did I book flights for?", "14th of July", ("m2",))]
    assert result.drafted == 8
    assert result.dropped == {BAD_IDS: 1, UNSUPPORTED: 1, GIVEN_AWAY: 1, DUPLICATE: 1, UNPARSEABLE: 2}
    assert set(result.dropped) <= set(REASONS)
    assert [p.category for p in result.probes] == ["plan", "drafted"]
    probe = result.probes[0]
    assert probe.meta == {"drafted": True, "backend": "fake", "model": "fake-llm", "prompt": PROMPT_NAME,
                          "session_id": "s1", "support": "text"}
    assert probe.asked_at > T0
    corpus = one_session_corpus()
    path = save_probes(result.probes, tmp_path / "drafts.jsonl")
    loaded = lyra_lab.load_probes(path, corpus)
    assert [(p.id, p.evidence, p.meta["model"]) for p in loaded] == [(p.id, p.evidence, "fake-llm")
                                                                      for p in result.probes]


def test_a_reply_without_json_is_counted_not_drafted():
    result = draft_probes(one_session_corpus(), FakeLLM(["1. What is my sister's name?\n2. Answer: Ines"]))
    assert result.probes == [] and result.drafted == 0 and result.dropped == {NO_JSON: 1}


def test_drafting_stops_at_n_and_parses_fenced_output():
    reply = "```json\n" + line("Where is my sister moving?", "Lisbon", ["1"]) + "\n" + \
        line("When are my flights?", "14th of July", 3) + "\n```"
    drafts, bad = parse_drafts(reply)
    assert bad == 0 and [d.turns for d in drafts] == [(1,), (3,)]
    result = draft_probes(one_session_corpus(), FakeLLM([reply]), n=1)
    assert len(result.probes) == 1 and result.dropped == {"over --n": 1}


@pytest.mark.parametrize("url, local", [(None, True), ("http://127.0.0.1:8080/v1", True),
                                        ("http://localhost:11434/v1", True), ("https://api.openai.com/v1", False),
                                        ("http://10.0.0.5:8000/v1", False)])
def test_only_this_machine_counts_as_local(url, local):
    assert is_local_endpoint(url) is local


@pytest.mark.parametrize("reply, pair", [("A: Lisbon\nQ: Where is my sister moving?", ("Where is my sister moving?", "Lisbon")),
                                         ("1. Question: Who is it?\n2. **Answer:** Ines.", ("Who is it?", "Ines")),
                                         ("Q: Who is it? A: Ines", ("Who is it?", "Ines")),
                                         ("A: ...\nQ: ...", None), ("What is her name?", None)])
def test_parse_qa_is_lenient_but_needs_both(reply, pair):
    assert parse_qa(reply) == pair


def test_qa_style_asks_per_fact_turn_and_keeps_every_check():
    llm = FakeLLM(["A: Lisbon\nQ: Where is my sister moving?", "A: 7\nQ: How old did my parrot turn?"])
    result = draft_probes(one_session_corpus(), llm, style="qa", per_session=3)
    assert result.calls == 2 and len(llm.calls) == 2  # the two user turns, not the assistant's
    assert "My sister Ines" in llm.calls[0][0]["content"] and "A:" in llm.calls[0][0]["content"]
    assert [(p.question, p.answer, p.evidence, p.meta["prompt"]) for p in result.probes] == [
        ("Where is my sister moving?", "Lisbon", ("m0",), "draft_qa_v1")]
    assert result.drafted == 2 and result.dropped == {COPIED: 1}
    assert fact_turns(one_session_corpus().conversations[0].sessions[0], 1) == [3]


def test_a_judge_keeps_paraphrased_answers_it_finds_supported_and_only_those():
    reply = "\n".join([
        line("Where is my sister moving?", "Lisbon", [1]),                    # words in the evidence: no judge call
        line("Why is my sister moving?", "for work", [1]),                    # paraphrase ("new job"): judge says yes
        line("Which drink did I decide to quit?", "tea", [3]),                # wrong: judge says no
    ])
    asked = []

    def judge(messages):
        text = messages[-1]["content"]
        asked.append(text.split("Answer: ")[1].split("\n")[0])
        return "YES, it says she moves for a new job." if "Answer: for work" in text else "NO"

    result = draft_probes(one_session_corpus(), FakeLLM([reply]), n=10, judge=FakeLLM(respond=judge))
    assert asked == ["for work", "tea"]  # only answers whose words are not in their evidence
    assert [(p.answer, p.meta["support"]) for p in result.probes] == [("Lisbon", "text"), ("for work", "judge")]
    assert (result.judge_calls, result.judge_kept) == (2, 1)
    assert result.dropped == {UNSUPPORTED: 1}
    without = draft_probes(one_session_corpus(), FakeLLM([reply]), n=10)
    assert [p.answer for p in without.probes] == ["Lisbon"] and without.dropped == {UNSUPPORTED: 2}
