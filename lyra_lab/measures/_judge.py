"""An optional LLM judge: is a generated answer correct given the gold answer?

The judge backend and the judge prompt are experiment variables (judge scores
move a lot with the prompt), so the prompt is named and recorded with results.
A judge returns 1 or 0 and its raw text.  Parsing is tolerant of how models
actually reply, in this order:

1. a ``label``/``verdict``/``answer``/``score`` field, JSON-style or ``key: value``;
2. the first word of the reply, if it is a verdict word;
3. the last verdict word anywhere in the reply (models reason, then conclude).

Verdict words: ``CORRECT``/``yes``/``1``/``true`` → 1; ``WRONG``/``INCORRECT``/
``not correct``/``no``/``0``/``false`` → 0.  A reply with no verdict scores 0 with
``parsed=False`` (conservative: an unreadable judgement is not a pass).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from lyra_lab.backends import Backend, Completion
from lyra_lab.corpus import Probe
from lyra_lab.matching import expects_abstention
from lyra_lab.measures._named import by_name, look_up

_ABSTAIN_GOLD = "(nothing: the conversation never says this; a correct answer says it is not mentioned)"


@dataclass(frozen=True)
class JudgePrompt:
    """A named judge prompt with ``{question}``, ``{gold}`` and ``{answer}`` slots, and where it comes from."""

    name: str
    template: str
    source: str = "lyra-lab"

    def render(self, probe: Probe, answer: str) -> str:
        gold = _ABSTAIN_GOLD if expects_abstention(probe) else str(probe.answer)
        return self.template.format(question=probe.question, gold=gold, answer=answer.strip() or "(empty)")


@dataclass(frozen=True)
class TypedJudgePrompt:
    """A judge prompt whose template depends on the probe's question type (its ``category``).

    ``templates`` maps a category to a template with ``{question}``, ``{gold}`` and
    ``{answer}`` slots; ``default`` serves other categories and ``abstention``
    serves probes that expect abstention (then ``{gold}`` is the gold text, which
    explains why the question cannot be answered).
    """

    name: str
    default: str
    abstention: str
    templates: tuple[tuple[str, str], ...] = ()
    source: str = "lyra-lab"

    def render(self, probe: Probe, answer: str) -> str:
        if expects_abstention(probe):
            template = self.abstention
        else:
            template = dict(self.templates).get(str(probe.category), self.default)
        return template.format(question=probe.question, gold=str(probe.answer), answer=answer.strip() or "(empty)")


_LME_ASK = "\n\nQuestion: {question}\n\n%s: {gold}\n\nResponse: {answer}\n\n%s Reply with yes or no only."
_LME_BASE = ("You are given a question, its correct answer and a model's response. Reply yes when the "
             "response contains the correct answer, states something equivalent, or shows every step "
             "that leads to it; reply no when it gives only part of what the answer needs, or gives "
             "something else.")
# LongMemEval's question-type-aware judge, restated in our own words (same rules).
LONGMEMEVAL_JUDGE = TypedJudgePrompt(
    "longmemeval_v1",
    default=_LME_BASE + _LME_ASK % ("Correct answer", "Is the response correct?"),
    abstention=("You are given a question that cannot be answered from the conversation, an explanation "
                "of why, and a model's response. Reply yes when the response recognises that it cannot "
                "answer: it may say the information is missing or incomplete, or that something else was "
                "said but not what is asked."
                + _LME_ASK % ("Explanation", "Does the response recognise that the question cannot be answered?")),
    templates=(
        ("temporal-reasoning", _LME_BASE + " Counts of days, weeks or months that are off by one still "
         "count as correct (19 days for an answer of 18)." + _LME_ASK % ("Correct answer",
                                                                          "Is the response correct?")),
        ("knowledge-update", _LME_BASE + " When the response mentions an earlier value as well as the "
         "updated one, it is correct as long as the updated value is the one it gives as the answer."
         + _LME_ASK % ("Correct answer", "Is the response correct?")),
        ("single-session-preference", "You are given a question, a rubric describing a personalised "
         "response, and a model's response. Reply yes when the response recalls and uses the user's "
         "personal information correctly; it need not cover every point of the rubric."
         + _LME_ASK % ("Rubric", "Does the response satisfy the rubric?")),
    ),
    source="LongMemEval's question-type-aware judge (xiaowu0162/LongMemEval src/evaluation/evaluate_qa.py, "
           "get_anscheck_prompt), restated in lyra-lab's words with the same rules",
)

# mem0's LoCoMo judge, quoted: the prompt text is what is measured, so it is kept word for word.
# Source: mem0ai/mem0, evaluation/metrics/llm_judge.py, ACCURACY_PROMPT (commit 2352a44), licence
# Apache-2.0 (mem0ai/mem0's).  Only the slot names differ: {gold_answer} -> {gold},
# {generated_answer} -> {answer}.  mem0 asks for a sentence of reasoning and a JSON label, so give
# this judge max_tokens of 60 or more.
MEM0_JUDGE = JudgePrompt(
    "mem0_locomo",
    """
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
Gold answer: {gold}
Generated answer: {answer}

First, provide a short (one sentence) explanation of your reasoning, then finish with CORRECT or WRONG. 
Do NOT include both CORRECT and WRONG in your response, or it will break the evaluation script.

Just return the label CORRECT or WRONG in a json format with the key as "label".
""",
    source="mem0's LoCoMo evaluation: mem0ai/mem0 evaluation/metrics/llm_judge.py ACCURACY_PROMPT "
           "(commit 2352a44, Apache-2.0), quoted word for word",
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
    STRICT_JUDGE,
)
DEFAULT_JUDGE_PROMPT = "correct_wrong_v1"


@dataclass(frozen=True, repr=False)
class JudgeConfig:
    """One judge of a run: a named prompt on a backend (``[qa] judges`` lists several).

    Attributes:
        prompt: a name in ``JUDGE_PROMPTS``.
        backend: the judge model: a preset name or a backend table, as in ``[run] backends``.
        max_tokens: verdict length cap.
        name: the judge's label in result rows (column ``judge``); default ``<prompt>@<backend>``.
        controls: also send this judge, for each judged probe, answers whose truth is known (the gold
            itself, and wrong but on-topic ones built from the conversation: ``lyra_lab.measures.judge_controls``),
            so the report gives its true- and false-positive rates; false: no control calls.
        corrected: report this judge's accuracy also corrected for its measured error rates
            (Rogan–Gladen: ``(J - FPR) / (TPR - FPR)``, clipped to [0, 1]); needs ``controls``.
    """

    prompt: str = DEFAULT_JUDGE_PROMPT
    backend: str | Mapping[str, Any] = ""  # a preset name or a backend table; required (checked below)
    max_tokens: int = 8
    name: str | None = None
    controls: bool = True
    corrected: bool = False

    def __post_init__(self) -> None:
        from lyra_lab._registry import ConfigError

        look_up(JUDGE_PROMPTS, self.prompt, "judge prompt")
        if not self.backend:
            raise ConfigError(f"judge {self.prompt!r} needs a 'backend' (the judge model is a named variable)")
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ConfigError(f"judge {self.prompt!r}: max_tokens must be a positive integer, got {self.max_tokens!r}")
        if self.name is not None and (not isinstance(self.name, str) or not self.name.strip()):
            raise ConfigError(f"judge {self.prompt!r}: name must be a non-empty string, got {self.name!r}")
        for key in ("controls", "corrected"):
            if not isinstance(getattr(self, key), bool):
                raise ConfigError(f"judge {self.prompt!r}: {key} must be true or false, got {getattr(self, key)!r}")
        if self.corrected and not self.controls:
            raise ConfigError(f"judge {self.prompt!r}: corrected = true needs controls = true "
                              "(the correction uses the error rates the controls measure)")

    def __repr__(self) -> str:
        # Cell ids hash this repr: the fields added later appear only when set away from their
        # defaults, so the cells of runs from before them keep their ids.
        shown = ["prompt", "backend", "max_tokens", "name"]
        shown += [k for k, default in (("controls", True), ("corrected", False)) if getattr(self, k) != default]
        return f"JudgeConfig({', '.join(f'{k}={getattr(self, k)!r}' for k in shown)})"

    @property
    def label(self) -> str:
        """The judge's name in rows and reports."""
        return self.name or f"{self.prompt}@{backend_label(self.backend)}"


def backend_label(spec: object) -> str:
    """A short name for a backend spec, as in the ``backend`` column: a string as it is, a table by its name/preset and model."""
    if isinstance(spec, str):
        from lyra_lab.backends import redact

        # a URL preset (llamacpp/http://user:pw@host/v1) must not carry its credentials into rows
        preset, _, url = spec.partition("/")
        return f"{preset}/{redact(url)}" if "://" in url else redact(spec)
    if isinstance(spec, Mapping):
        name = str(spec.get("name") or spec.get("preset") or "custom")
        return f"{name}/{spec['model']}" if spec.get("model") and "/" not in name else name
    return spec.name if isinstance(spec, Backend) else type(spec).__name__


@dataclass(frozen=True)
class JudgeResult:
    """A judgement: ``score`` 1 or 0, the judge's ``raw`` reply, whether it was ``parsed``."""

    score: int
    raw: str
    parsed: bool
    prompt: str
    completion: Completion | None = None


_POSITIVE = {"correct", "yes", "1", "true", "right"}
_NEGATIVE = {"wrong", "incorrect", "no", "0", "false", "not_correct"}
_FIELD = re.compile(r"""["']?(?:label|verdict|answer|score|judgement|judgment)["']?\s*[:=]\s*["']?([A-Za-z01]+)""",
                    re.IGNORECASE)
_WORD = re.compile(r"\bnot\s+correct\b|[A-Za-z]+|\b[01]\b", re.IGNORECASE)


def _verdict(word: str) -> int | None:
    word = re.sub(r"\s+", "_", word.lower())
    if word in _POSITIVE:
        return 1
    if word in _NEGATIVE:
        return 0
    return None


def parse_judgement(raw: str) -> tuple[int, bool]:
    """``(score, parsed)`` from a judge's reply; see the module docstring for the rules."""
    for match in _FIELD.finditer(raw):
        verdict = _verdict(match.group(1))
        if verdict is not None:
            return verdict, True
    words = _WORD.findall(raw)
    if words and (first := _verdict(words[0])) is not None:
        return first, True
    # "yes"/"no"/"1"/"0" mid-sentence are too ambiguous; only the strong words count there.
    strong = [v for w in words if w.lower() in {"correct", "wrong", "incorrect"} or w.lower().startswith("not")
              for v in [_verdict(w)] if v is not None]
    if strong:
        return strong[-1], True
    return 0, False


def judge_answer(
    probe: Probe,
    answer: str,
    backend: Backend,
    prompt: str | JudgePrompt | TypedJudgePrompt = DEFAULT_JUDGE_PROMPT,
    *,
    max_tokens: int = 8,
) -> JudgeResult:
    """Ask the judge ``backend`` whether ``answer`` is correct for ``probe`` (temperature 0)."""
    if not isinstance(prompt, (JudgePrompt, TypedJudgePrompt)):
        prompt = look_up(JUDGE_PROMPTS, prompt, "judge prompt")
    message = {"role": "user", "content": prompt.render(probe, answer)}
    completion = backend.complete([message], max_tokens=max_tokens, temperature=0.0)
    score, parsed = parse_judgement(completion.text)
    return JudgeResult(score=score, raw=completion.text, parsed=parsed, prompt=prompt.name, completion=completion)
