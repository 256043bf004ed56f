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

from lyra_lab.backends._types import Backend, Completion
from lyra_lab.corpus import Probe
from lyra_lab.evaluate._qa import expects_abstention

_ABSTAIN_GOLD = "(nothing: the conversation never says this; a correct answer says it is not mentioned)"


@dataclass(frozen=True)
class JudgePrompt:
    """A named judge prompt with ``{question}``, ``{gold}`` and ``{answer}`` slots."""

    name: str
    template: str

    def render(self, probe: Probe, answer: str) -> str:
        gold = _ABSTAIN_GOLD if expects_abstention(probe) else str(probe.answer)
        return self.template.format(question=probe.question, gold=gold, answer=answer.strip() or "(empty)")


JUDGE_PROMPTS: dict[str, JudgePrompt] = {
    p.name: p
    for p in (
        # After the LoCoMo judge used by Mem0's evaluation: generous on wording and date formats.
        JudgePrompt(
            "correct_wrong_v1",
            "Label a generated answer to a question about a past conversation as CORRECT or WRONG.\n"
            "Be generous: it is CORRECT if it refers to the same thing, person, date or time period "
            "as the gold answer, even in other words or date formats. It is WRONG if it misses or "
            "contradicts the gold answer.\n\nQuestion: {question}\nGold answer: {gold}\n"
            "Generated answer: {answer}\n\nReply with one word: CORRECT or WRONG.",
        ),
    )
}
DEFAULT_JUDGE_PROMPT = "correct_wrong_v1"


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
    prompt: str | JudgePrompt = DEFAULT_JUDGE_PROMPT,
    *,
    max_tokens: int = 8,
) -> JudgeResult:
    """Ask the judge ``backend`` whether ``answer`` is correct for ``probe`` (temperature 0)."""
    if not isinstance(prompt, JudgePrompt):
        try:
            prompt = JUDGE_PROMPTS[prompt]
        except KeyError:
            from lyra_lab._registry import ConfigError

            raise ConfigError(f"unknown judge prompt {prompt!r}; known: {', '.join(sorted(JUDGE_PROMPTS))}") from None
    message = {"role": "user", "content": prompt.render(probe, answer)}
    completion = backend.complete([message], max_tokens=max_tokens, temperature=0.0)
    score, parsed = parse_judgement(completion.text)
    return JudgeResult(score=score, raw=completion.text, parsed=parsed, prompt=prompt.name, completion=completion)
