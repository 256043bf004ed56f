"""Differential tests: lyra-lab's benchmark-named judges against rewrites of the benchmarks' own rules.

``_mem0_*`` rewrite mem0's LoCoMo judge (mem0ai/mem0 ``evaluation/metrics/llm_judge.py`` at commit
2352a44: ``ACCURACY_PROMPT`` and ``evaluate_llm_judge``, with ``extract_json`` from
``mem0/memory/utils.py``); ``_lme_*`` rewrite LongMemEval's (xiaowu0162/LongMemEval
``src/evaluation/evaluate_qa.py`` at commit f466efe: ``get_anscheck_prompt`` and the loop that calls
it, and ``src/evaluation/print_qa_metrics.py`` at b11ff72).  The prompt strings below are this
module's own copies of the upstream text, so a drift in lyra-lab's copy fails here.

lyra-lab's side goes through the real path: ``judge_answer`` on a recording fake judge (the prompt
chosen, the text rendered, the call's parameters, the verdict read), LongMemEval instances through
lyra-lab's LongMemEval loader (which decides abstention from the id), and ``longmemeval_table`` for
the task-averaged accuracy.  Every generated case must agree, except where upstream itself raises
(then lyra-lab's side is checked against what its docs say it does).
"""

from __future__ import annotations

import json
import math
import re
import tempfile
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab.backends import Completion, Usage
from lyra_lab.corpus import Probe, load
from lyra_lab.measures import JUDGE_PROMPTS, JudgeConfig, judge_answer
from lyra_lab.reports import longmemeval_table

# --- mem0's rules, rewritten ----------------------------------------------------------------------

MEM0_ACCURACY_PROMPT = """
Your task is to label an answer to a question as ’CORRECT’ or ’WRONG’. You will be given the following data:
    (1) a question (posed by one user to another user), 
    (2) a ’gold’ (ground truth) answer, 
    (3) a generated answer
which you will score as CORRECT/WRONG.

The point of the question is to ask about something one user should know about the other user based on their prior conversations.
The gold answer will usually be a concise and short answer that includes the referenced topic, for example:
Question: Do you remember what I got the last time I went to Hawaii?
Gold answer: A shell necklace
The generated answer might be much longer, but you should be generous with your grading - as long as it touches on the same topic as the gold answer, it should be counted as CORRECT. 

For time related questions, the gold answer will be a specific date, month, year, etc. The generated answer might be much longer or use relative time references (like "last Tuesday" or "next month"), but you should be generous with your grading - as long as it refers to the same date or time period as the gold answer, it should be counted as CORRECT. Even if the format differs (e.g., "May 7th" vs "7 May"), consider it CORRECT if it's the same date.

Now it's time for the real question:
Question: {question}
Gold answer: {gold_answer}
Generated answer: {generated_answer}

First, provide a short (one sentence) explanation of your reasoning, then finish with CORRECT or WRONG. 
Do NOT include both CORRECT and WRONG in your response, or it will break the evaluation script.

Just return the label CORRECT or WRONG in a json format with the key as "label".
"""  # noqa: E501  (quoted verbatim, trailing spaces included)


def _mem0_prompt(question: str, gold_answer: object, generated_answer: str) -> str:
    return MEM0_ACCURACY_PROMPT.format(question=question, gold_answer=gold_answer,
                                       generated_answer=generated_answer)


def _mem0_extract_json(text: str) -> str:
    text = text.strip()
    match = re.search(r"```(?:json)?\s*(.*?)\s*```", text, re.DOTALL)
    return match.group(1) if match else text


def _mem0_verdict(content: str) -> int:
    """evaluate_llm_judge's reading of the reply (raises where it raises)."""
    label = json.loads(_mem0_extract_json(content))["label"]
    return 1 if label == "CORRECT" else 0


# --- LongMemEval's rules, rewritten ---------------------------------------------------------------

LME_PLAIN = ("I will give you a question, a correct answer, and a response from a model. Please answer yes if the "
             "response contains the correct answer. Otherwise, answer no. If the response is equivalent to the "
             "correct answer or contains all the intermediate steps to get the correct answer, you should also "
             "answer yes. If the response only contains a subset of the information required by the answer, "
             "answer no. \n\nQuestion: {}\n\nCorrect Answer: {}\n\nModel Response: {}\n\nIs the model response "
             "correct? Answer yes or no only.")
LME_TEMPORAL = ("I will give you a question, a correct answer, and a response from a model. Please answer yes if "
                "the response contains the correct answer. Otherwise, answer no. If the response is equivalent to "
                "the correct answer or contains all the intermediate steps to get the correct answer, you should "
                "also answer yes. If the response only contains a subset of the information required by the "
                "answer, answer no. In addition, do not penalize off-by-one errors for the number of days. If the "
                "question asks for the number of days/weeks/months, etc., and the model makes off-by-one errors "
                "(e.g., predicting 19 days when the answer is 18), the model's response is still correct. "
                "\n\nQuestion: {}\n\nCorrect Answer: {}\n\nModel Response: {}\n\nIs the model response correct? "
                "Answer yes or no only.")
LME_UPDATE = ("I will give you a question, a correct answer, and a response from a model. Please answer yes if the "
              "response contains the correct answer. Otherwise, answer no. If the response contains some previous "
              "information along with an updated answer, the response should be considered as correct as long as "
              "the updated answer is the required answer.\n\nQuestion: {}\n\nCorrect Answer: {}\n\nModel "
              "Response: {}\n\nIs the model response correct? Answer yes or no only.")
LME_PREFERENCE = ("I will give you a question, a rubric for desired personalized response, and a response from a "
                  "model. Please answer yes if the response satisfies the desired response. Otherwise, answer no. "
                  "The model does not need to reflect all the points in the rubric. The response is correct as "
                  "long as it recalls and utilizes the user's personal information correctly.\n\nQuestion: {}\n\n"
                  "Rubric: {}\n\nModel Response: {}\n\nIs the model response correct? Answer yes or no only.")
LME_ABSTENTION = ("I will give you an unanswerable question, an explanation, and a response from a model. Please "
                  "answer yes if the model correctly identifies the question as unanswerable. The model could say "
                  "that the information is incomplete, or some other information is given but the asked "
                  "information is not.\n\nQuestion: {}\n\nExplanation: {}\n\nModel Response: {}\n\nDoes the "
                  "model correctly identify the question as unanswerable? Answer yes or no only.")
LME_MAX_TOKENS = 10  # evaluate_qa.py's kwargs
LME_TYPES = ["single-session-user", "single-session-preference", "single-session-assistant", "multi-session",
             "temporal-reasoning", "knowledge-update"]


def _lme_prompt(task: str, question: str, answer: object, response: str, abstention: bool = False) -> str:
    """get_anscheck_prompt, rewritten (raises NotImplementedError where it does)."""
    if abstention:
        return LME_ABSTENTION.format(question, answer, response)
    if task in ("single-session-user", "single-session-assistant", "multi-session"):
        return LME_PLAIN.format(question, answer, response)
    if task == "temporal-reasoning":
        return LME_TEMPORAL.format(question, answer, response)
    if task == "knowledge-update":
        return LME_UPDATE.format(question, answer, response)
    if task == "single-session-preference":
        return LME_PREFERENCE.format(question, answer, response)
    raise NotImplementedError


def _lme_verdict(content: str) -> bool:
    return "yes" in content.strip().lower()


def _lme_task_averaged(entries: Sequence[tuple[str, bool]]) -> float:
    """print_qa_metrics' task-averaged accuracy over ``(question_type, label)`` entries."""
    type2acc: dict[str, list[int]] = {t: [] for t in LME_TYPES}
    for qtype, label in entries:
        type2acc[qtype].append(1 if label else 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # np.mean([]) is nan, with a warning, upstream too
        return float(np.mean([np.mean(v) for v in type2acc.values()]))


# --- a recording fake judge -----------------------------------------------------------------------

class RecordingFakeJudge:
    """A fake judge backend: replies ``reply`` and records each call's messages and parameters."""

    name = "recording-fake"
    model = "fake"

    def __init__(self, reply: str):
        self.reply = reply
        self.calls: list[tuple[list[dict[str, str]], dict[str, object]]] = []

    def complete(self, messages, *, deadline=None, **params) -> Completion:
        self.calls.append(([dict(m) for m in messages], dict(params)))
        return Completion(text=self.reply, usage=Usage(), latency_s=0.0, backend=self.name, model=self.model,
                          simulated=True, finish_reason="stop")


# --- generated cases ------------------------------------------------------------------------------

ISSUE_REPLIES = [
    '{"reasoning": "The generated answer: no mention of the necklace", "label": "CORRECT"}',
    '{"explanation": "The answer: correct topic", "label": "WRONG"}',
    "correct", "CORRECT", "CORRECT.", "Correct", "I would say yes", "yes", "Yes.", "no", "No, not yes",
    "eyes", '{"label": "CORRECT"}', '{"label": "correct"}', '{"label": "CORRECT."}', '{"label": " CORRECT"}',
    '```json\n{"label": "CORRECT"}\n```', '```\n{"label": "WRONG"}\n```', 'Sure: ```{"label": "CORRECT"}```',
    '{"label": "CORRECT"} trailing', '["CORRECT"]', '"CORRECT"', "42", "null", '{"Label": "CORRECT"}',
    '{"label": true}', '{"label": "WRONG", "label": "CORRECT"}', "", "   ", '{"label": "CORRE',
    '{"reasoning": "It matches', "answer: correct", "label: CORRECT",
]
_json_reply = st.builds(
    lambda extra, label: json.dumps({**extra, "label": label}),
    st.dictionaries(st.sampled_from(["reasoning", "explanation", "answer", "verdict"]),
                    st.text(max_size=40), max_size=2),
    st.one_of(st.sampled_from(["CORRECT", "WRONG", "correct", "Correct", "CORRECT.", "yes"]), st.text(max_size=8),
              st.integers(), st.booleans(), st.none()))
_fenced = st.builds(lambda tag, body, pad: f"{pad}```{tag}\n{body}\n```{pad}", st.sampled_from(["", "json", "JSON"]),
                    _json_reply, st.sampled_from(["", " ", "\n", "Here: "]))
replies = st.one_of(st.sampled_from(ISSUE_REPLIES), _json_reply, _fenced, st.text(max_size=60))
# answers as a model might give them: empty, padded, with braces (str.format must not read them), long
answers = st.one_of(st.sampled_from(["", "  ", "\n", " Lisbon ", "{question}", "{}", "7 May 2023\n"]),
                    st.text(max_size=80))
texts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)


@st.composite
def locomo_probes(draw) -> Probe:
    gold = draw(st.one_of(texts, st.integers(1900, 2100).map(str)))
    return Probe(id="c:q", conversation_id="c", question=draw(texts), answer=gold,
                 category=draw(st.sampled_from([1, 2, 3, 4])))


@settings(max_examples=400)
@given(probe=locomo_probes(), answer=answers, reply=replies)
def test_mem0_locomo_renders_sends_and_reads_as_mem0(probe, answer, reply):
    judge = RecordingFakeJudge(reply)
    result = judge_answer(probe, answer, judge, "mem0_locomo")
    (messages, params), = judge.calls
    assert messages == [{"role": "user", "content": _mem0_prompt(probe.question, probe.answer, answer)}]
    assert params["response_format"] == {"type": "json_object"} and params["temperature"] == 0.0
    try:
        expected = _mem0_verdict(reply)
    except (ValueError, KeyError, TypeError):  # where mem0 itself raises: lyra-lab scores 0, unparsed
        assert (result.score, result.parsed) == (0, False)
    else:
        assert (result.score, result.parsed) == (expected, True)


@pytest.mark.parametrize("reply, mem0", [
    ('{"reasoning": "The generated answer: no mention of it", "label": "CORRECT"}', 1),
    ('{"explanation": "The answer: correct topic", "label": "WRONG"}', 0),
    ('{"label": "correct"}', 0), ('{"label": "CORRECT."}', 0),
])
def test_the_issues_mem0_replies_score_as_mem0_scores_them(reply, mem0):
    probe = Probe(id="c:q", conversation_id="c", question="Where?", answer="Lisbon", category=1)
    assert _mem0_verdict(reply) == mem0
    assert judge_answer(probe, "Lisbon", RecordingFakeJudge(reply), "mem0_locomo").score == mem0


def test_the_lenient_mem0_variant_keeps_the_text_and_reads_tolerantly():
    probe = Probe(id="c:q", conversation_id="c", question="Where?", answer="Lisbon", category=1)
    judge = RecordingFakeJudge("CORRECT.")
    result = judge_answer(probe, "  ", judge, "mem0_locomo_lenient")
    (messages, params), = judge.calls
    assert messages[0]["content"] == _mem0_prompt("Where?", "Lisbon", "(empty)")  # stripped, empty named
    assert "response_format" not in params and result.score == 1  # mem0's rule: 0 (not JSON)
    assert judge_answer(probe, "x", RecordingFakeJudge("CORRECT."), "mem0_locomo").score == 0


# LongMemEval-shaped question ids: `_abs` anywhere or nowhere, and near misses ("_ABS", "abs", "_ab_s")
_id_part = st.text("abcdef0123456789", min_size=1, max_size=8)
question_ids = st.builds(lambda a, mark, b: a + mark + b, _id_part,
                         st.sampled_from(["", "_abs", "_abs_", "_ABS", "abs", "_ab_s", "__abs", "_absent"]),
                         st.sampled_from(["", "_abs", "_2", "x"])) | st.builds(lambda b: "_abs" + b, _id_part)
question_types = st.sampled_from(LME_TYPES + ["multi-hop", "Temporal-Reasoning", "knowledge_update", "other"])


@st.composite
def lme_instances(draw) -> list[dict[str, object]]:
    ids = draw(st.lists(question_ids, min_size=1, max_size=8, unique=True))
    out = []
    for qid in ids:
        gold = draw(st.one_of(texts, st.integers(0, 400)))
        out.append({"question_id": qid, "question_type": draw(question_types), "question": draw(texts),
                    "answer": gold, "question_date": "2023/05/30 (Tue) 23:40",
                    "haystack_session_ids": [f"s_{qid}"], "haystack_dates": ["2023/05/25 (Thu) 10:00"],
                    "haystack_sessions": [[{"role": "user", "content": "My dog Rex loves walks.", "has_answer": True},
                                           {"role": "assistant", "content": "Lovely!"}]],
                    "answer_session_ids": [f"s_{qid}"]})
    return out


def _load_instances(instances: list[dict[str, object]]) -> list[Probe]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "longmemeval_gen.json"
        path.write_text(json.dumps(instances), encoding="utf-8")
        return list(load(path).probes)


@settings(max_examples=250)
@given(instances=lme_instances(), data=st.data())
def test_longmemeval_judging_chooses_renders_sends_and_reads_as_evaluate_qa(instances, data):
    probes = {p.id: p for p in _load_instances(instances)}

    for entry in instances:
        qid, qtype = str(entry["question_id"]), str(entry["question_type"])
        probe = probes[qid]
        hypothesis, reply = data.draw(answers), data.draw(replies)
        judge = RecordingFakeJudge(reply)
        result = judge_answer(probe, hypothesis, judge, "longmemeval_v1")
        (messages, params), = judge.calls
        assert params["max_tokens"] == LME_MAX_TOKENS and params["temperature"] == 0.0
        assert "response_format" not in params
        assert (result.score, result.parsed) == (int(_lme_verdict(reply)), True)
        try:
            expected = _lme_prompt(qtype, entry["question"], entry["answer"], hypothesis, abstention="_abs" in qid)
        except NotImplementedError:  # upstream raises on a type it does not know; lyra-lab: the plain template

            assert messages[0]["content"] == LME_PLAIN.format(entry["question"], entry["answer"], hypothesis)
            continue
        assert messages == [{"role": "user", "content": expected}], qid


@pytest.mark.parametrize("reply, label", [("I would say yes", 1), ("Correct", 0), ("yes", 1), ("No.", 0),
                                          ("eyes", 1), ("YES, it is", 1)])
def test_the_issues_longmemeval_replies_score_as_evaluate_qa_scores_them(reply, label):
    probe = Probe(id="q1", conversation_id="q1", question="Q?", answer="A", category="multi-session")
    assert int(_lme_verdict(reply)) == label
    assert judge_answer(probe, "A", RecordingFakeJudge(reply), "longmemeval_v1").score == label


@pytest.mark.parametrize("qid, abstention", [("q_abs", True), ("gpt4_abs_1a2b", True), ("_abs_q", True),
                                             ("q1", False), ("q_ABS", False), ("qabs", False)])
def test_the_loader_flags_abs_anywhere_in_the_id_as_upstream_does(qid, abstention):
    instance = {"question_id": qid, "question_type": "multi-session", "question": "Q?", "answer": "A",
                "question_date": "2023/05/30 (Tue) 23:40", "haystack_session_ids": ["s"],
                "haystack_dates": ["2023/05/25 (Thu) 10:00"],
                "haystack_sessions": [[{"role": "user", "content": "hi"}]], "answer_session_ids": ["s"]}
    probe, = _load_instances([instance])
    assert probe.abstention is abstention is ("_abs" in qid)
    template = JUDGE_PROMPTS["longmemeval_v1"].render(probe, "R")
    assert template == _lme_prompt("multi-session", "Q?", "A", "R", abstention=abstention)


@settings(max_examples=200)
@given(entries=st.lists(st.tuples(st.sampled_from(LME_TYPES), st.booleans(), st.booleans()), min_size=1,
                        max_size=40))
def test_task_averaged_accuracy_is_print_qa_metrics_nan_included(entries):
    rows = pd.DataFrame([{"pipeline": "p", "probe_id": f"q{i}" + ("_abs" if abs_ else ""), "category": t,
                          "metric": "judge", "judge": "j", "value": float(label)}
                         for i, (t, label, abs_) in enumerate(entries)])
    cell = longmemeval_table(rows).cells.set_index(["measure", "column"]).loc[("judge accuracy (j)",
                                                                                "task-averaged"), "value"]
    expected = _lme_task_averaged([(t, label) for t, label, _ in entries])
    assert (math.isnan(cell) and math.isnan(expected)) or cell == pytest.approx(expected)


# --- what each prompt asks of the reply -----------------------------------------------------------

def test_a_judge_defaults_to_its_prompts_need_and_is_refused_below_it():
    from lyra_lab._registry import ConfigError

    assert JudgeConfig("mem0_locomo", "x").max_tokens == 128
    assert JudgeConfig("longmemeval_v1", "x").max_tokens == LME_MAX_TOKENS
    assert JudgeConfig("correct_wrong_v1", "x").max_tokens == 8  # one word: cells of older runs keep their ids
    with pytest.raises(ConfigError, match=r"^judge 'mem0_locomo': max_tokens = 8 is below its prompt's minimum "
                                          r"of 128$"):
        JudgeConfig("mem0_locomo", "x", max_tokens=8)
    probe = Probe(id="c:q", conversation_id="c", question="Where?", answer="Lisbon", category=1)
    with pytest.raises(ConfigError, match="minimum of 10"):
        judge_answer(probe, "Lisbon", RecordingFakeJudge("yes"), "longmemeval_v1", max_tokens=8)


def test_the_default_length_does_not_cut_a_mem0_reply():
    from lyra_lab.backends import count_tokens

    reasoning = ("The generated answer says she moved to Lisbon in the spring of 2023 after her new job started, "
                 "which refers to the same city and time period as the gold answer, so it touches the same topic.")
    reply = json.dumps({"reasoning": reasoning, "label": "CORRECT"})
    assert count_tokens(reply) < JudgeConfig("mem0_locomo", "x").max_tokens
    assert count_tokens(reply) > 8  # the old default cut such a reply before its label
