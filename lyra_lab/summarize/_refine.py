"""``refine``: a running summary folded with each chunk in turn."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from lyra_lab.backends import Backend
from lyra_lab.chunking import Chunk
from lyra_lab.summarize._calls import call, excerpt
from lyra_lab._params import param
from lyra_lab.summarize._common import BaseSummarizer, Run, focus_param, prompts_param, temperature_param
from lyra_lab.summarize._prompts import Prompts
from lyra_lab.summarize._registry import SUMMARIZERS
from lyra_lab.summarize._types import Summary


@SUMMARIZERS.register("refine")
@dataclass(frozen=True)
class RefineSummarizer(BaseSummarizer):
    """Summarize the first chunk, then fold each next chunk into the running summary.

    Serial by nature (each step needs the previous summary), so it suits
    ordered narratives and small backends that take one request at a time.
    A failed step keeps the running summary and appends the chunk's raw
    excerpt, which the next step folds in; the summary is then ``partial``,
    the error is in ``errors`` and a ``step_excerpt`` degradation in
    ``degraded`` names the step.  If every step fails, ``BackendError``.

    Args:
        max_tokens: the most tokens each step's summary may take.
        step_timeout_s: each call's deadline, retries included (each attempt
            stays bounded by the backend's own ``timeout_s``).
        excerpt_chars: how much raw text stands in for a failed step.
        prompts: templates (``chunk`` for the first step, ``refine`` after), or a dict overriding some.
        temperature, focus: as for every summarizer (``lyra_lab.summarize._common``).
    """

    max_tokens: int = param(256, ge=1)
    temperature: float = temperature_param()
    step_timeout_s: float = param(120.0, gt=0)
    excerpt_chars: int = param(600, ge=1)
    prompts: Prompts = prompts_param()
    focus: str | None = focus_param()

    def fold(self, chunks: Sequence[Chunk], backend: Backend, focus: str | None, run: Run) -> Summary:
        n, running = len(chunks), ""
        for i, chunk in enumerate(chunks, 1):
            if running:
                messages = self.prompts.messages("refine", focus=focus, summary=running,
                                                 transcript=chunk.text, i=i, n=n)
            else:
                messages = self.prompts.messages("chunk", focus=focus, transcript=chunk.text, i=i, n=n)
            outcome = call(backend, messages, self.step_timeout_s, max_tokens=self.max_tokens,
                           temperature=self.temperature)
            run.chunk_done(i, n, outcome)
            if outcome.completion is not None:
                run.calls.append(outcome.completion)
                running = outcome.completion.text.strip()
            else:
                run.degrade("step_excerpt", f"chunk {i}/{n}", outcome, chunk.turn_ids)
                running = (running + "\n\n" + excerpt(chunk, self.excerpt_chars)).strip()
        if not run.calls:
            raise run.fail(backend, f"all {n} calls failed")
        return run.finish(running)
