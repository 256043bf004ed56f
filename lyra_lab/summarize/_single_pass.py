"""``single_pass``: the whole transcript in one call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from lyra_lab.backends import Backend
from lyra_lab.chunking import Chunk
from lyra_lab.summarize._calls import call
from lyra_lab.summarize._common import Run, focus_of, check_params, decision_of, joined_text
from lyra_lab.summarize._prompts import DEFAULT_PROMPTS, Prompts
from lyra_lab.summarize._registry import SUMMARIZERS
from lyra_lab.summarize._types import ProgressCallback, Summary


@SUMMARIZERS.register("single_pass")
@dataclass(frozen=True)
class SinglePassSummarizer:
    """Join the chunks (overlaps dropped) and summarize them in one call.

    A failed or timed-out call raises ``BackendError``: with one call there is
    nothing partial to fall back on.

    Args:
        max_tokens: the most tokens the summary may take.
        temperature: sampling temperature (0: deterministic).
        timeout_s: the call's deadline.
        prompts: templates (``single`` is used), or a dict overriding some.
        focus: an instruction ("the user's plans and dates") put into every prompt through
            the ``focus`` template; None: no focus (the prompts are the plain defaults).
            A ``focus`` argument to ``summarize`` overrides it for that call.
    """

    max_tokens: int = 256
    temperature: float = 0.0
    timeout_s: float = 300.0
    prompts: Prompts = DEFAULT_PROMPTS
    focus: str | None = None

    def __post_init__(self) -> None:
        check_params(self, timeout_s=self.timeout_s)

    def summarize(self, chunks: Sequence[Chunk], backend: Backend, focus: str | None = None,
                  on_event: ProgressCallback | None = None) -> Summary:
        focus = focus_of(self, focus)
        run = Run("single_pass", chunks, decision_of(chunks, "single_pass"), on_event)
        if not chunks:
            return run.finish("")
        messages = self.prompts.messages("single", focus=focus, transcript=joined_text(chunks))
        outcome = call(backend, messages, self.timeout_s, max_tokens=self.max_tokens,
                       temperature=self.temperature)
        run.chunk_done(1, 1, outcome)
        if outcome.completion is None:
            run.errors.append(f"call 1/1: {outcome.error}")
            raise run.fail(backend, "the call failed")
        run.calls.append(outcome.completion)
        return run.finish(outcome.completion.text)
