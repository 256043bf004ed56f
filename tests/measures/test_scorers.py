"""The named QA scorers, each rule pinned by a hand-computed case."""

from __future__ import annotations

import pytest

from lyra_lab import ConfigError
from lyra_lab.backends import FakeLLM
from lyra_lab.corpus import Probe
from lyra_lab.measures import JUDGE_PROMPTS, SCORERS, judge_answer, locomo_normalize, score_answer


def probe(answer: str, category=4, **kw) -> Probe:
    return Probe("p", "c", "What was it?", answer, category=category, **kw)


def test_scorers_are_named():
    assert SCORERS == ("squad", "locomo", "longmemeval")
    with pytest.raises(ConfigError, match="unknown QA scorer 'locomoo'; known: squad, locomo, longmemeval"):
        score_answer(probe("x"), "x", scorer="locomoo")


def test_default_is_squad_and_unchanged():
    p = probe("Running shoe and tent")
    assert score_answer(p, "running shoes, a tent") == score_answer(p, "running shoes, a tent", scorer="squad")
    # SQuAD: pred {running, shoes, tent} vs gold {running, shoe, and, tent}: 2 common -> P 2/3, R 1/2
    assert score_answer(p, "running shoes, a tent")["qa_f1"] == pytest.approx(4 / 7)


def test_locomo_normalization_drops_commas_and_the_word_and():
    assert locomo_normalize("Running shoes, a tent and THE stove!") == "running shoes tent stove"
    # commas are removed before splitting words: "1,000" stays one token
    assert locomo_normalize("1,000 miles") == "1000 miles"


def test_locomo_stems_and_drops_and():
    # pred: run shoe tent / gold: run shoe tent (after "and" is dropped and stems applied)
    assert score_answer(probe("Running shoe and tent"), "running shoes, a tent", scorer="locomo")["qa_f1"] == 1.0


def test_locomo_em_compares_token_sets():
    scores = score_answer(probe("tent and shoes"), "shoes tent tent", scorer="locomo")
    assert scores["qa_em"] == 1.0  # sets {tent, shoes} equal; multiset F1 is below 1
    assert scores["qa_f1"] == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))


def test_locomo_category_1_averages_best_match_per_gold_part():
    scores = score_answer(probe("Rome, Paris, Berlin", category=1), "Paris, Rome", scorer="locomo")
    assert scores["qa_f1"] == pytest.approx(2 / 3)
    # the same strings under category 4 are one bag of words: P 2/2, R 2/3
    assert score_answer(probe("Rome, Paris, Berlin", category=4), "Paris, Rome", scorer="locomo")["qa_f1"] \
        == pytest.approx(0.8)


def test_locomo_category_3_cuts_gold_at_semicolon():
    assert score_answer(probe("Yes; because she likes it", category=3), "yes", scorer="locomo")["qa_f1"] == 1.0
    assert score_answer(probe("Yes; because she likes it", category=4), "yes", scorer="locomo")["qa_f1"] < 0.5


@pytest.mark.parametrize("answer, expected", [
    ("No information available.", 1.0), ("That was not mentioned", 1.0),
    ("I don't know", 0.0),  # abstains by the squad rule, but not by the release's two phrases
    ("Paris", 0.0),
])
def test_locomo_category_5_needs_the_release_phrases(answer, expected):
    scores = score_answer(probe("trap answer", category=5, adversarial=True), answer, scorer="locomo")
    assert scores == {"qa_em": expected, "qa_f1": expected}


def test_longmemeval_strings_are_squad_and_abstention_declines():
    p = probe("Lisbon", category="multi-session")
    assert score_answer(p, "lisbon", scorer="longmemeval") == score_answer(p, "lisbon", scorer="squad")
    abstain = probe("You never said where", category="multi-session", abstention=True)
    assert score_answer(abstain, "Not mentioned in our chats", scorer="longmemeval")["qa_f1"] == 1.0
    assert score_answer(abstain, "Lisbon", scorer="longmemeval")["qa_f1"] == 0.0


@pytest.mark.parametrize("category, phrase", [
    ("temporal-reasoning", "off-by-one errors"),
    ("knowledge-update", "updated answer"),
    ("single-session-preference", "Rubric:"),
    ("multi-session", "Correct Answer:"),
])
def test_longmemeval_judge_prompt_follows_question_type(category, phrase):
    prompt = JUDGE_PROMPTS["longmemeval_v1"]
    text = prompt.render(probe("18 days", category=category), "19 days")
    assert phrase in text and "19 days" in text and "18 days" in text
    assert "unanswerable" not in text


def test_longmemeval_judge_abstention_prompt_and_verdict():
    llm = FakeLLM(outputs=["yes"])
    p = probe("The user never mentioned a dentist", category="multi-session", abstention=True)
    result = judge_answer(p, "I don't have that information", llm, "longmemeval_v1")
    assert result.score == 1 and result.prompt == "longmemeval_v1"
    sent = llm.calls[0][0]["content"]
    assert "unanswerable" in sent and "The user never mentioned a dentist" in sent
