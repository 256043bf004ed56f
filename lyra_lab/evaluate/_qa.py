"""Question answering over recalled context, scored by exact match and token F1.

Normalization of the default ``squad`` scorer follows the SQuAD evaluation
script: lowercase, drop punctuation, drop the articles ``a``/``an``/``the``,
collapse whitespace.  LoCoMo's and LongMemEval's own rules are the named
scorers ``"locomo"`` and ``"longmemeval"`` (``score_answer(..., scorer=)``, see
``_scorers``); use them to set a figure beside those benchmarks' tables.

Adversarial and abstention probes (``Probe.adversarial`` / ``Probe.abstention``)
ask about something the conversation never says.  Their rule: the answer is
correct (EM = F1 = 1) when it *abstains*, i.e. its normalized text matches one of
``ABSTAIN_PATTERNS`` ("not mentioned", "no information", "unknown", "don't know",
"cannot answer", "not stated"…), otherwise EM = F1 = 0 — regardless of the gold
text, which for LoCoMo category 5 is the trap answer, not a correct one.
"""

from __future__ import annotations

import dataclasses
import re
import string
from collections import Counter
from dataclasses import dataclass
from typing import Any

from lyra_lab.backends._types import Backend, Completion
from lyra_lab.corpus import Probe

_PUNCT = str.maketrans("", "", string.punctuation + "‘’“”–—")
_ARTICLES = re.compile(r"\b(a|an|the)\b")

# Matched against the *normalized* answer (lowercase, no punctuation, no articles).
ABSTAIN_PATTERNS: tuple[str, ...] = (
    r"\bnot (?:been )?(?:mentioned|stated|specified|discussed|provided|given|known|available|said)\b",
    r"\bno (?:information|mention|record|evidence|details?|data)\b",
    r"\bnever (?:mentioned|said|discussed|stated)\b",
    r"\bunknown\b",
    r"\b(?:i )?(?:do not|dont|don t) know\b",
    r"\b(?:cannot|can not|cant|can t|unable to) (?:answer|tell|say|determine|be determined)\b",
    r"\bnot (?:in|from) (?:memory|context|conversation)\b",
    r"\bnot answerable\b|\bunanswerable\b",
)
_ABSTAIN = re.compile("|".join(ABSTAIN_PATTERNS))


def normalize_answer(text: Any) -> str:
    """SQuAD normalization: lowercase, no punctuation, no articles, single spaces."""
    text = str(text).lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: Any, gold: Any) -> float:
    """1.0 when the normalized strings are equal, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(gold))


def token_f1(prediction: Any, gold: Any) -> float:
    """Token-overlap F1 of the normalized strings (multiset overlap, as in SQuAD).

    When either side has no tokens, F1 is 1.0 if both are empty and 0.0 otherwise.
    """
    pred = normalize_answer(prediction).split()
    ref = normalize_answer(gold).split()
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision = common / len(pred)
    recall = common / len(ref)
    return 2 * precision * recall / (precision + recall)


def abstains(prediction: Any) -> bool:
    """True when the answer says the memory holds no answer (see ``ABSTAIN_PATTERNS``)."""
    return bool(_ABSTAIN.search(normalize_answer(prediction)))


def expects_abstention(probe: Probe) -> bool:
    return bool(probe.adversarial or probe.abstention)


def score_answer(probe: Probe, prediction: str, scorer: str = "squad") -> dict[str, float]:
    """``{"qa_em", "qa_f1"}`` of one answer under a named scorer (see ``lyra_lab.evaluate.SCORERS``).

    ``"squad"`` (the default) is described in this module's docstring; ``"locomo"``
    and ``"longmemeval"`` follow those benchmarks' own rules (``_scorers``), the
    probe's category picking the LoCoMo rule.
    """
    from lyra_lab.evaluate._scorers import score_with

    return score_with(scorer, probe, prediction)


def score_squad(probe: Probe, prediction: str) -> dict[str, float]:
    """The ``squad`` scorer: adversarial/abstention probes by the abstain rule, others EM and F1."""
    if expects_abstention(probe):
        value = float(abstains(prediction))
        return {"qa_em": value, "qa_f1": value}
    return {"qa_em": exact_match(prediction, probe.answer), "qa_f1": token_f1(prediction, probe.answer)}


@dataclass(frozen=True)
class AnswerPrompt:
    """A named answer prompt; ``template`` has ``{context}`` and ``{question}`` (and may use ``{asked_at}``)."""

    name: str
    template: str

    def render(self, probe: Probe, context: str) -> str:
        asked = probe.asked_at.strftime("%Y-%m-%d %H:%M UTC") if probe.asked_at else "unknown"
        return self.template.format(context=context.strip() or "(empty)", question=probe.question,
                                    asked_at=asked)


# Instruction and content go in ONE user message: the tiny local model ignores system prompts.
ANSWER_PROMPTS: dict[str, AnswerPrompt] = {
    p.name: p
    for p in (
        AnswerPrompt(
            "short_v1",
            "Answer the question using only the memory below. Reply with a short phrase "
            "(a few words, no full sentence). If the memory does not contain the answer, "
            "reply exactly: Not mentioned.\n\nMemory:\n{context}\n\nQuestion: {question}\nAnswer:",
        ),
        AnswerPrompt(
            "dated_v1",
            "Today is {asked_at}. Answer the question using only the memory below, which is "
            "dated. Give dates as absolute dates. Reply with a short phrase. If the memory does "
            "not contain the answer, reply exactly: Not mentioned.\n\nMemory:\n{context}\n\n"
            "Question: {question}\nAnswer:",
        ),
    )
}
DEFAULT_ANSWER_PROMPT = "short_v1"


def get_answer_prompt(prompt: str | AnswerPrompt) -> AnswerPrompt:
    if isinstance(prompt, AnswerPrompt):
        return prompt
    try:
        return ANSWER_PROMPTS[prompt]
    except KeyError:
        from lyra_lab._registry import ConfigError

        raise ConfigError(f"unknown answer prompt {prompt!r}; known: {', '.join(sorted(ANSWER_PROMPTS))}") from None


def answer_probe(
    probe: Probe,
    context: str,
    backend: Backend,
    prompt: str | AnswerPrompt = DEFAULT_ANSWER_PROMPT,
    *,
    max_tokens: int = 48,
    temperature: float = 0.0,
    **params: Any,
) -> Completion:
    """Ask ``backend`` the probe's question over ``context``; the Completion carries latency and cost.

    The answer text is stripped of a leading "Answer:" echo, which small models often produce.
    """
    message = {"role": "user", "content": get_answer_prompt(prompt).render(probe, context)}
    completion = backend.complete([message], max_tokens=max_tokens, temperature=temperature, **params)
    text = re.sub(r"^\s*answer\s*:\s*", "", completion.text, flags=re.IGNORECASE).strip()
    return completion if text == completion.text else dataclasses.replace(completion, text=text)
