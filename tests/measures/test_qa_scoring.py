"""EM/F1 by SQuAD conventions, the abstention rule, answer_probe and the judge parser."""

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import FakeLLM
from lyra_lab.corpus import Probe
from lyra_lab.measures import ANSWER_PROMPTS, answer_probe, judge_answer, parse_judgement, score_answer
from lyra_lab.matching import abstains, exact_match, normalize_answer, token_f1


def probe(answer="7 May 2023", **kw):
    return Probe(id="p1", conversation_id="c1", question="When did she go?", answer=answer, **kw)


def test_normalization_squad():
    assert normalize_answer("The Eiffel  Tower!") == "eiffel tower"
    assert normalize_answer("An apple, a day.") == "apple day"
    assert normalize_answer(2022) == "2022"
    # articles only as whole words: "theatre" keeps its "the"
    assert normalize_answer("the theatre") == "theatre"


def test_exact_match():
    assert exact_match("the Eiffel Tower.", "Eiffel tower") == 1.0
    assert exact_match("Eiffel Tower in Paris", "Eiffel Tower") == 0.0


def test_token_f1_hand_computed():
    # pred "eiffel tower in paris" (4 tokens), gold "eiffel tower" (2): common 2
    # precision 2/4, recall 2/2 -> F1 = 2*.5*1/1.5 = 2/3
    assert token_f1("Eiffel Tower in Paris", "the Eiffel Tower") == pytest.approx(2 / 3)
    # multiset overlap: pred "a a b" -> tokens [b] after article removal? no: "a" is an article.
    # use "x x y" vs "x y": common = min(2,1)+min(1,1) = 2; P = 2/3, R = 2/2 -> F1 = 0.8
    assert token_f1("x x y", "x y") == pytest.approx(0.8)
    assert token_f1("nothing shared", "eiffel tower") == 0.0
    # SQuAD: if either side is empty, F1 = 1 when both are empty else 0
    assert token_f1("the", "a") == 1.0
    assert token_f1("", "tower") == 0.0


def test_score_answer_plain_probe():
    assert score_answer(probe(), "7 May, 2023.") == {"qa_em": 1.0, "qa_f1": 1.0}
    # "may 2023" vs "7 may 2023": common 2, P = 1, R = 2/3 -> F1 = 0.8
    assert score_answer(probe(), "May 2023") == {"qa_em": 0.0, "qa_f1": pytest.approx(0.8)}


@pytest.mark.parametrize("reply", [
    "Not mentioned.", "That is not mentioned in the conversation", "Unknown", "I don't know.",
    "There is no information about that.", "It cannot be determined from the memory.",
])
def test_adversarial_probe_correct_when_abstaining(reply):
    p = probe(answer="a trap answer", adversarial=True)
    assert abstains(reply)
    assert score_answer(p, reply) == {"qa_em": 1.0, "qa_f1": 1.0}


def test_adversarial_probe_wrong_when_answering_even_with_gold_text():
    p = probe(answer="a trap answer", abstention=True)
    assert score_answer(p, "a trap answer") == {"qa_em": 0.0, "qa_f1": 0.0}
    assert not abstains("She mentioned Paris")


def test_answer_probe_one_user_message_and_strips_echo():
    llm = FakeLLM(outputs=["Answer: 7 May 2023"])
    completion = answer_probe(probe(), "[2023-05-07] Caroline: I went to the group.", llm)
    assert completion.text == "7 May 2023"
    (messages,) = llm.calls
    assert len(messages) == 1 and messages[0]["role"] == "user"
    assert "When did she go?" in messages[0]["content"]
    assert "I went to the group." in messages[0]["content"]
    assert "Not mentioned" in messages[0]["content"]


def test_answer_probe_named_prompts():
    llm = FakeLLM(outputs=["x"])
    answer_probe(probe(), "ctx", llm, prompt="dated_v1")
    assert "Today is unknown" in llm.calls[0][0]["content"]
    assert set(ANSWER_PROMPTS) >= {"short_v1", "dated_v1"}
    with pytest.raises(ConfigError, match="unknown answer prompt"):
        answer_probe(probe(), "ctx", llm, prompt="nope")


@pytest.mark.parametrize("raw,expected", [
    ("CORRECT", (1, True)),
    ("WRONG", (0, True)),
    ("Incorrect.", (0, True)),
    ('{"label": "CORRECT"}', (1, True)),
    ("```json\n{\"label\": \"WRONG\"}\n```", (0, True)),
    ("Verdict: correct", (1, True)),
    ("yes", (1, True)),
    ("No, it names another city.", (0, True)),
    ("The generated answer matches the gold date, so it is CORRECT", (1, True)),
    ("The answer is not correct.", (0, True)),
    ("The answer mentions the right person but the label is WRONG", (0, True)),
    ("score: 1", (1, True)),
    ("I am unsure.", (0, False)),
    ("", (0, False)),
])
def test_parse_judgement(raw, expected):
    assert parse_judgement(raw) == expected


def test_judge_answer_records_prompt_and_raw():
    llm = FakeLLM(outputs=["CORRECT"])
    result = judge_answer(probe(), "May 7th 2023", llm)
    assert (result.score, result.raw, result.parsed, result.prompt) == (1, "CORRECT", True, "correct_wrong_v1")
    content = llm.calls[0][0]["content"]
    assert "Gold answer: 7 May 2023" in content and "May 7th 2023" in content
    # an adversarial probe's gold is not shown as the trap answer
    llm.enqueue("WRONG")
    judge_answer(probe(answer="trap", adversarial=True), "Paris", llm)
    assert "trap" not in llm.calls[1][0]["content"]
