"""Question answering over recalled context, scored by exact match and token F1.

The default ``squad`` scorer normalizes as the SQuAD evaluation script does and
scores adversarial and abstention probes by the abstain rule (both in
``lyra_lab.matching``).  LoCoMo's and LongMemEval's own rules are the named
scorers ``"locomo"`` and ``"longmemeval"`` (``score_answer(..., scorer=)``, see
``_scorers``); use them to set a figure beside those benchmarks' tables.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from lyra_lab.backends import Backend, Completion, Message
from lyra_lab.corpus import Probe
from lyra_lab.measures._named import by_name, look_up
from lyra_lab.measures._scorers import score_with

def score_answer(probe: Probe, prediction: str, scorer: str = "squad") -> dict[str, float]:
    """``{"qa_em", "qa_f1"}`` of one answer under a named scorer (see ``lyra_lab.measures.SCORERS``).

    ``"squad"`` (the default) is described in this module's docstring; ``"locomo"``
    and ``"longmemeval"`` follow those benchmarks' own rules (``_scorers``), the
    probe's category picking the LoCoMo rule.
    """
    return score_with(scorer, probe, prediction)


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
ANSWER_PROMPTS: dict[str, AnswerPrompt] = by_name(
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
DEFAULT_ANSWER_PROMPT = "short_v1"


def get_answer_prompt(prompt: str | AnswerPrompt) -> AnswerPrompt:
    """The ``AnswerPrompt`` named ``prompt`` (or ``prompt`` itself); ``ConfigError`` for an unknown name."""
    return prompt if isinstance(prompt, AnswerPrompt) else look_up(ANSWER_PROMPTS, prompt, "answer prompt")


def answer_probe(probe: Probe, context: str, backend: Backend, prompt: str | AnswerPrompt = DEFAULT_ANSWER_PROMPT,
                 max_tokens: int = 48) -> Completion:
    """Ask ``backend`` the probe's question over ``context`` (temperature 0); the Completion carries latency and cost.

    The answer text is stripped of a leading "Answer:" echo, which small models often produce.
    """
    message: Message = {"role": "user", "content": get_answer_prompt(prompt).render(probe, context)}
    completion = backend.complete([message], max_tokens=max_tokens, temperature=0.0)
    text = re.sub(r"^\s*answer\s*:\s*", "", completion.text, flags=re.IGNORECASE).strip()
    return completion if text == completion.text else dataclasses.replace(completion, text=text)
