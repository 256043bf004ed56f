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
from dataclasses import dataclass, field
from typing import Callable, TypedDict, Unpack

from lyra_lab.backends import Backend, Completion, Message
from lyra_lab.corpus import Probe
from lyra_lab.measures import _answer_prompts as upstream
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
    """A named answer prompt.

    Attributes:
        name: its name in ``ANSWER_PROMPTS`` (the ``answer_prompt`` column when several are asked).
        template: lyra-lab's own prompts have ``{context}`` and ``{question}`` (and may use
            ``{asked_at}``); a benchmark's is its text verbatim, filled by ``renderer``.
        max_tokens: the answer cap the source sets (None: ``[qa] max_tokens``).
        source: where a benchmark's text comes from (repository, path, commit); empty for lyra-lab's.
        renderer: fills a benchmark's template from the probe and context as its source does
            (``_answer_prompts``); None: ``str.format`` of lyra-lab's slots.
    """

    name: str
    template: str
    max_tokens: int | None = None
    source: str = ""
    renderer: Callable[[str, Probe, str], str] | None = field(default=None, compare=False, repr=False)

    def render(self, probe: Probe, context: str) -> str:
        """The prompt's text for ``probe`` over ``context``."""
        if self.renderer is not None:
            return self.renderer(self.template, probe, context)
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
    AnswerPrompt("locomo", upstream.LOCOMO_QA_PROMPT, upstream.LOCOMO_MAX_TOKENS,
                 "snap-research/LoCoMo task_eval/gpt_utils.py @0e22967 (QA_PROMPT)", upstream.render_locomo),
    AnswerPrompt("mem0", upstream.MEM0_ANSWER_PROMPT, None,
                 "mem0ai/mem0 evaluation/prompts.py @393a4fd (ANSWER_PROMPT)", upstream.render_mem0),
    AnswerPrompt("longmemeval", upstream.LONGMEMEVAL_ANSWER_PROMPT, upstream.LONGMEMEVAL_MAX_TOKENS,
                 "xiaowu0162/LongMemEval src/generation/run_generation.py @283612f (answer_prompt_template)",
                 upstream.render_longmemeval),
)
DEFAULT_ANSWER_PROMPT = "short_v1"


def get_answer_prompt(prompt: str | AnswerPrompt) -> AnswerPrompt:
    """The ``AnswerPrompt`` named ``prompt`` (or ``prompt`` itself); ``ConfigError`` for an unknown name."""
    return prompt if isinstance(prompt, AnswerPrompt) else look_up(ANSWER_PROMPTS, prompt, "answer prompt")


class Sampling(TypedDict, total=False):
    """How an answer is drawn, as keywords: ``temperature`` (default 0), ``seed`` (None: the backend's own)."""

    temperature: float
    seed: int | None


def answer_probe(probe: Probe, context: str, backend: Backend, prompt: str | AnswerPrompt = DEFAULT_ANSWER_PROMPT,
                 max_tokens: int = 48, **sampling: Unpack[Sampling]) -> Completion:
    """Ask ``backend`` the probe's question over ``context``; the Completion carries latency and cost.

    ``max_tokens`` applies when the prompt sets none of its own (``AnswerPrompt.max_tokens``);
    ``sampling``'s ``seed`` is passed on, so it also keys the response cache: a repeat's own seed makes it
    a call of its own.  The answer text is stripped of a leading "Answer:" echo, which
    small models often produce.
    """
    chosen = get_answer_prompt(prompt)
    message: Message = {"role": "user", "content": chosen.render(probe, context)}
    seed = sampling.get("seed")
    extra: dict[str, int] = {} if seed is None else {"seed": seed}
    completion = backend.complete([message], max_tokens=chosen.max_tokens or max_tokens,
                                  temperature=sampling.get("temperature", 0.0), **extra)
    text = re.sub(r"^\s*answer\s*:\s*", "", completion.text, flags=re.IGNORECASE).strip()
    return completion if text == completion.text else dataclasses.replace(completion, text=text)
