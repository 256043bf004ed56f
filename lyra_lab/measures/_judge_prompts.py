"""The judge prompts by name: their text, where it comes from, and what each asks of the reply.

A prompt named after a benchmark is that benchmark's, verbatim: its text, how its slots are
filled, which template a question gets, the reply length and format it is sent with, and how
its reply is read (``JudgeReply.verdict``, ``lyra_lab.measures._verdicts``).  lyra-lab's own
prompts and its lenient variants of a benchmark's have names of their own.

* ``mem0_locomo`` — mem0ai/mem0 ``evaluation/metrics/llm_judge.py`` at commit 2352a44
  (``ACCURACY_PROMPT``, ``evaluate_llm_judge``; Apache-2.0): the prompt word for word with its
  own slot names; question, gold and the generated answer inserted as they are; sent with
  ``response_format = {"type": "json_object"}`` at temperature 0; read by ``mem0_label``.  mem0
  sets no length; lyra-lab caps the reply at ``MEM0_MAX_TOKENS`` (a sentence of reasoning and the
  label, in JSON) and refuses a judge set below it.  mem0 does not judge LoCoMo's category 5;
  lyra-lab grades a probe that expects abstention with the gold slot ``_ABSTAIN_GOLD``.
* ``mem0_locomo_lenient`` — the same text, without JSON mode, the answer stripped (an empty one
  is ``(empty)``), read by lyra-lab's tolerant ``lenient`` rule (a one-word ``CORRECT``, a
  ``label: correct`` or ``"CORRECT."`` reads as 1 here and as 0 under mem0's rule): for models
  and servers that do not answer in JSON.
* ``longmemeval_v1`` — xiaowu0162/LongMemEval ``src/evaluation/evaluate_qa.py`` at commit f466efe
  (``get_anscheck_prompt`` and its caller; the same rules at b11ff72): each question type's
  template word for word; the abstention template for a probe that expects abstention (the
  LongMemEval loader flags a question whose id holds ``_abs`` anywhere, as upstream's
  ``'_abs' in question_id``); slots filled positionally with the question, the gold answer
  (LongMemEval's explanation, for an abstention) and the response as it is; ``max_tokens`` 10;
  read by ``longmemeval_yes``.  A question type LongMemEval does not know raises upstream
  (``NotImplementedError``); lyra-lab gives it the template of single-session-user,
  single-session-assistant and multi-session.
"""

from __future__ import annotations

from dataclasses import dataclass

from lyra_lab.corpus import Probe
from lyra_lab.matching import expects_abstention
from lyra_lab.measures._named import by_name
from lyra_lab.measures._verdicts import VERDICTS

_ABSTAIN_GOLD = "(nothing: the conversation never says this; a correct answer says it is not mentioned)"
#: the reply length mem0_locomo is sent with: mem0 asks for a sentence of reasoning, then the label in
#: JSON (mem0 sends no cap; 8 tokens cut such a reply before its label)
MEM0_MAX_TOKENS = 128
#: the reply length LongMemEval's evaluate_qa.py sends its judge
LONGMEMEVAL_MAX_TOKENS = 10


@dataclass(frozen=True)
class JudgeReply:
    """What a judge prompt asks of its reply, and how the reply is read.

    Attributes:
        verdict: the rule that reads the reply (a name in ``VERDICTS``: ``lenient``, ``mem0_label``,
            ``longmemeval_yes``).
        max_tokens: the reply length the prompt needs: a judge's default, and its minimum (a judge
            set below it is refused).
        response_format: sent as ``response_format = {"type": ...}`` (``json_object``), or None.
        shape: the reply asked for, in words (for the refusal line and the docs).
    """

    verdict: str = "lenient"
    max_tokens: int = 8
    response_format: str | None = None
    shape: str = "one word"

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict rule {self.verdict!r}; known: {', '.join(sorted(VERDICTS))}")

    def read(self, raw: str) -> tuple[int, bool]:
        """``(score, parsed)`` from the judge's reply under this prompt's rule."""
        return VERDICTS[self.verdict](raw)

    def params(self) -> dict[str, object]:
        """The call parameters the prompt is sent with besides ``max_tokens`` and ``temperature``."""
        return {"response_format": {"type": self.response_format}} if self.response_format else {}


def _fill(template: str, slots: tuple[str, ...], question: str, gold: str, answer: str) -> str:
    """``template`` with its slots filled: by name (``slots``: the question's, the gold's, the answer's), else by position."""
    values = (question, gold, answer)
    return template.format(**dict(zip(slots, values))) if slots else template.format(*values)


@dataclass(frozen=True)
class JudgePrompt:
    """A named judge prompt: its template, where it comes from, and what it asks of the reply.

    Attributes:
        name: the prompt's name (``[qa] judges`` ``prompt``; the ``judge_prompt`` column).
        template: the text, with slots for the question, the gold answer and the answer judged.
        source: where it comes from (file and commit for a benchmark's).
        reply: the reply it asks for and how that is read.
        slots: the template's slot names for the question, the gold and the answer.
        as_is: insert the answer as it is (a benchmark's rule); false: stripped, an empty one ``(empty)``.
    """

    name: str
    template: str
    source: str = "lyra-lab"
    reply: JudgeReply = JudgeReply()
    slots: tuple[str, ...] = ("question", "gold", "answer")
    as_is: bool = False

    def render(self, probe: Probe, answer: str) -> str:
        """The prompt for ``answer`` to ``probe`` (a probe expecting abstention gets ``_ABSTAIN_GOLD`` as its gold)."""
        gold = _ABSTAIN_GOLD if expects_abstention(probe) else str(probe.answer)
        return _fill(self.template, self.slots, probe.question, gold, _answer(answer, self.as_is))


@dataclass(frozen=True)
class TypedJudgePrompt:
    """A judge prompt whose template depends on the probe's question type (its ``category``).

    ``templates`` maps a category to a template; ``default`` serves other categories and
    ``abstention`` serves probes that expect abstention (then the gold slot holds the gold text,
    which explains why the question cannot be answered).  Fields as ``JudgePrompt``'s; ``slots``
    empty: the templates' slots are positional (question, gold, answer).
    """

    name: str
    default: str
    abstention: str
    templates: tuple[tuple[str, str], ...] = ()
    source: str = "lyra-lab"
    reply: JudgeReply = JudgeReply()
    slots: tuple[str, ...] = ("question", "gold", "answer")
    as_is: bool = False

    def template_for(self, probe: Probe) -> str:
        """The template ``probe`` is judged with: abstention first, then its category's, else the default."""
        if expects_abstention(probe):
            return self.abstention
        return dict(self.templates).get(str(probe.category), self.default)

    def render(self, probe: Probe, answer: str) -> str:
        """The prompt for ``answer`` to ``probe``."""
        return _fill(self.template_for(probe), self.slots, probe.question, str(probe.answer),
                     _answer(answer, self.as_is))


def _answer(answer: str, as_is: bool) -> str:
    return answer if as_is else (answer.strip() or "(empty)")


# LongMemEval's question-type-aware judge, quoted word for word (xiaowu0162/LongMemEval,
# src/evaluation/evaluate_qa.py, get_anscheck_prompt, commit f466efe; MIT).  Slots are positional:
# question, answer (the explanation, for an abstention), response.
_LME_ASK = "\n\nQuestion: {}\n\nCorrect Answer: {}\n\nModel Response: {}\n\nIs the model response correct? Answer yes or no only."
_LME_INTRO = ("I will give you a question, a correct answer, and a response from a model. Please answer yes if the "
              "response contains the correct answer. Otherwise, answer no.")
_LME_STEPS = (" If the response is equivalent to the correct answer or contains all the intermediate steps to get "
              "the correct answer, you should also answer yes. If the response only contains a subset of the "
              "information required by the answer, answer no. ")
LONGMEMEVAL_JUDGE = TypedJudgePrompt(
    "longmemeval_v1",
    default=_LME_INTRO + _LME_STEPS + _LME_ASK,
    abstention=("I will give you an unanswerable question, an explanation, and a response from a model. Please "
                "answer yes if the model correctly identifies the question as unanswerable. The model could say "
                "that the information is incomplete, or some other information is given but the asked "
                "information is not.\n\nQuestion: {}\n\nExplanation: {}\n\nModel Response: {}\n\nDoes the model "
                "correctly identify the question as unanswerable? Answer yes or no only."),
    templates=(
        ("temporal-reasoning", _LME_INTRO + _LME_STEPS + "In addition, do not penalize off-by-one errors for the "
         "number of days. If the question asks for the number of days/weeks/months, etc., and the model makes "
         "off-by-one errors (e.g., predicting 19 days when the answer is 18), the model's response is still "
         "correct. " + _LME_ASK),
        ("knowledge-update", _LME_INTRO + " If the response contains some previous information along with an "
         "updated answer, the response should be considered as correct as long as the updated answer is the "
         "required answer." + _LME_ASK),
        ("single-session-preference", "I will give you a question, a rubric for desired personalized response, "
         "and a response from a model. Please answer yes if the response satisfies the desired response. "
         "Otherwise, answer no. The model does not need to reflect all the points in the rubric. The response "
         "is correct as long as it recalls and utilizes the user's personal information correctly.\n\n"
         "Question: {}\n\nRubric: {}\n\nModel Response: {}\n\nIs the model response correct? Answer yes or no "
         "only."),
    ),
    source="LongMemEval's judge, quoted word for word: xiaowu0162/LongMemEval src/evaluation/evaluate_qa.py "
           "get_anscheck_prompt (commit f466efe), max_tokens 10, verdict 'yes' in the reply",
    reply=JudgeReply("longmemeval_yes", LONGMEMEVAL_MAX_TOKENS, shape="yes or no"),
    slots=(),
    as_is=True,
)

# mem0's LoCoMo judge, quoted word for word with its own slot names: mem0ai/mem0,
# evaluation/metrics/llm_judge.py, ACCURACY_PROMPT (commit 2352a44), licence Apache-2.0.
MEM0_PROMPT = """
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
"""
_MEM0_SLOTS = ("question", "gold_answer", "generated_answer")
_MEM0_REPLY = "a sentence of reasoning, then the label, in JSON"
MEM0_JUDGE = JudgePrompt(
    "mem0_locomo",
    MEM0_PROMPT,
    source="mem0's LoCoMo judge: mem0ai/mem0 evaluation/metrics/llm_judge.py ACCURACY_PROMPT "
           "(commit 2352a44, Apache-2.0), quoted word for word; JSON mode, verdict label == \"CORRECT\"",
    reply=JudgeReply("mem0_label", MEM0_MAX_TOKENS, "json_object", _MEM0_REPLY),
    slots=_MEM0_SLOTS,
    as_is=True,
)
MEM0_LENIENT_JUDGE = JudgePrompt(
    "mem0_locomo_lenient",
    MEM0_PROMPT,
    source="lyra-lab's lenient variant of mem0's LoCoMo judge: mem0's prompt text (mem0ai/mem0 "
           "evaluation/metrics/llm_judge.py, commit 2352a44, Apache-2.0), no JSON mode, answer stripped, "
           "read by lyra-lab's tolerant rule",
    reply=JudgeReply("lenient", MEM0_MAX_TOKENS, shape=_MEM0_REPLY),
    slots=_MEM0_SLOTS,
)

# A strict judge: the same fact or nothing.  lyra-lab's own wording, written after the strict
# re-grading of mem0's LoCoMo answers reported in mem0ai/memory-benchmarks#29 (91.0% generous,
# 35.0% strict); its text is not that thread's.
STRICT_JUDGE = JudgePrompt(
    "strict_v1",
    "Label a generated answer to a question about a past conversation as CORRECT or WRONG.\n"
    "Be strict: it is CORRECT only if it states the same specific fact as the gold answer: the same "
    "person, thing, number, and the same date to the precision the gold gives (day, month, year). "
    "It is WRONG if it is vaguer than the gold, hedges between options, adds a claim that contradicts "
    "the gold, or only touches the same topic.\n\nQuestion: {question}\nGold answer: {gold}\n"
    "Generated answer: {answer}\n\nReply with one word: CORRECT or WRONG.",
    source="lyra-lab's own strict rule (after the strict re-grading in mem0ai/memory-benchmarks#29)",
)


JUDGE_PROMPTS: dict[str, JudgePrompt | TypedJudgePrompt] = by_name(
    # After the LoCoMo judge used by Mem0's evaluation: generous on wording and date formats.
    JudgePrompt(
        "correct_wrong_v1",
        "Label a generated answer to a question about a past conversation as CORRECT or WRONG.\n"
        "Be generous: it is CORRECT if it refers to the same thing, person, date or time period "
        "as the gold answer, even in other words or date formats. It is WRONG if it misses or "
        "contradicts the gold answer.\n\nQuestion: {question}\nGold answer: {gold}\n"
        "Generated answer: {answer}\n\nReply with one word: CORRECT or WRONG.",
        source="lyra-lab's own, after the rule of mem0's LoCoMo judge (generous on wording and dates)",
    ),
    LONGMEMEVAL_JUDGE,
    MEM0_JUDGE,
    MEM0_LENIENT_JUDGE,
    STRICT_JUDGE,
)
DEFAULT_JUDGE_PROMPT = "correct_wrong_v1"
