"""``refine``: a running summary folded with each chunk in turn."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from lyra_lab.backends import Backend
from lyra_lab.chunking import Chunk
from lyra_lab.summarize._calls import call, excerpt
from lyra_lab.summarize._common import Run, focus_of, check_count, check_params, decision_of
from lyra_lab.summarize._prompts import DEFAULT_PROMPTS, Prompts
from lyra_lab.summarize._registry import SUMMARIZERS
from lyra_lab.summarize._types import ProgressCallback, Summary


@SUMMARIZERS.register("refine")
@dataclass(frozen=True)
class RefineSummarizer:
    """Summarize the first chunk, then fold each next chunk into the running summary.

    Serial by nature (each step needs the previous summary), so it suits
    ordered narratives and small backends that take one request at a time.
    A failed step keeps the running summary and appends the chunk's raw
    excerpt, which the next step folds in; the summary is then ``partial``
    and the error is in ``errors``.  If every step fails, ``BackendError``.

    Args:
        max_tokens: the most tokens each step's summary may take.
        temperature: sampling temperature (0: deterministic).
        step_timeout_s: each call's deadline.
        excerpt_chars: how much raw text stands in for a failed step.
        prompts: templates (``chunk`` for the first step, ``refine`` after), or a dict overriding some.
        focus: an instruction ("the user's plans and dates") put into every prompt through
            the ``focus`` template; None: no focus (the prompts are the plain defaults).
            A ``focus`` argument to ``summarize`` overrides it for that call.
    """

    max_tokens: int = 256
    temperature: float = 0.0
    step_timeout_s: float = 120.0
    excerpt_chars: int = 600
    prompts: Prompts = DEFAULT_PROMPTS
    focus: str | None = None

    def __post_init__(self) -> None:
        check_params(self, step_timeout_s=self.step_timeout_s)
        check_count(self, excerpt_chars=self.excerpt_chars)

    def summarize(self, chunks: Sequence[Chunk], backend: Backend, focus: str | None = None,
                  on_event: ProgressCallback | None = None) -> Summary:
        focus = focus_of(self, focus)
        run = Run("refine", chunks, decision_of(chunks, "refine"), on_event)
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
                run.errors.append(f"chunk {i}/{n}: {outcome.error}")
                running = (running + "\n\n" + excerpt(chunk, self.excerpt_chars)).strip()
        if n and not run.calls:
            raise run.fail(backend, f"all {n} calls failed")
        return run.finish(running)
