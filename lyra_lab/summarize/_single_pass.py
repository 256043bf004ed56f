"""``single_pass``: the whole transcript in one call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from lyra_lab.backends import Backend
from lyra_lab.chunking import Chunk
from lyra_lab.summarize._calls import call
from lyra_lab._params import param
from lyra_lab.summarize._common import BaseSummarizer, Run, focus_param, joined_text, prompts_param, temperature_param
from lyra_lab.summarize._prompts import Prompts
from lyra_lab.summarize._registry import SUMMARIZERS
from lyra_lab.summarize._types import Summary


@SUMMARIZERS.register("single_pass")
@dataclass(frozen=True)
class SinglePassSummarizer(BaseSummarizer):
    """Join the chunks (overlaps dropped) and summarize them in one call.

    A failed or timed-out call raises ``BackendError``: with one call there is
    nothing partial to fall back on.

    Args:
        max_tokens: the most tokens the summary may take.
        timeout_s: the call's deadline, retries included (each attempt stays
            bounded by the backend's own ``timeout_s``).
        prompts: templates (``single`` is used), or a dict overriding some.
        temperature, focus: as for every summarizer (``lyra_lab.summarize._common``).
    """

    max_tokens: int = param(256, ge=1)
    temperature: float = temperature_param()
    timeout_s: float = param(300.0, gt=0)
    prompts: Prompts = prompts_param()
    focus: str | None = focus_param()

    def fold(self, chunks: Sequence[Chunk], backend: Backend, focus: str | None, run: Run) -> Summary:
        messages = self.prompts.messages("single", focus=focus, transcript=joined_text(chunks))
        outcome = call(backend, messages, self.timeout_s, max_tokens=self.max_tokens,
                       temperature=self.temperature)
        run.chunk_done(1, 1, outcome)
        if outcome.completion is None:
            run.lost("call 1/1", outcome)
            raise run.fail(backend, "the call failed")
        run.calls.append(outcome.completion)
        return run.finish(outcome.completion.text)
