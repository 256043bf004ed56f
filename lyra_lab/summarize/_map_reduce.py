"""``map_reduce``: chunk calls in parallel (bounded, each with a deadline), then one merge call."""

from __future__ import annotations

import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from typing import Sequence

from lyra_lab.backends import Backend
from lyra_lab.chunking import Chunk
from lyra_lab.summarize._calls import GRACE_S, CallOutcome, call, excerpt, outcome_of, start_call
from lyra_lab._params import param
from lyra_lab.summarize._common import (BaseSummarizer, Run, focus_param, prompts_param, temperature_param,
                                        turn_ids_of)
from lyra_lab.summarize._prompts import Prompts
from lyra_lab.summarize._registry import SUMMARIZERS
from lyra_lab.summarize._types import Summary


@SUMMARIZERS.register("map_reduce")
@dataclass(frozen=True)
class MapReduceSummarizer(BaseSummarizer):
    """Summarize every chunk concurrently, then merge the partial summaries in one call.

    * At most ``max_concurrency`` chunk calls are in flight.  Each must be
      over within ``chunk_timeout_s``: a deadline for the whole call, retries
      and backoff included, passed to the backend as ``deadline=`` (each
      attempt stays bounded by the backend's own ``timeout_s``) and also
      enforced here: past its deadline a call is abandoned (its late answer
      discarded) and its slot goes to the next chunk, so a hung backend cannot
      stall the summary.  Set ``max_concurrency`` no higher than the
      backend's own limit, or calls queue inside it against their deadline.
    * A failed chunk call (after the backend's own retries) is recorded: the
      chunk's raw excerpt stands in for its summary, a ``Degradation`` of kind
      ``chunk_excerpt`` in ``Summary.degraded`` names the chunk, its turns and
      why (and ``Summary.errors``/``partial`` say so too): one bad chunk
      should not lose the other n-1.  If every chunk call fails there is
      nothing to merge: ``BackendError``.
    * The merge call gets the shorter ``merge_timeout_s``; if it fails, the
      summary is the partial summaries concatenated (a ``merge_concatenated``
      degradation, ``partial=True``, the error recorded).
    * ``chunk_done`` events come as calls finish (``i`` says which chunk), all
      from the calling thread.
    * One chunk needs no merge: its summary is the summary (one call), so
      ``map_reduce`` over an ``adaptive`` plan that chose ``single_pass``
      makes exactly one call.

    Args:
        max_concurrency: the most chunk calls in flight at once.
        chunk_timeout_s: each chunk call's deadline, retries included.
        merge_timeout_s: the merge call's deadline, retries included.
        max_tokens: the most tokens each partial summary may take.
        merge_max_tokens: the most tokens the merged summary may take.
        excerpt_chars: how much raw text stands in for a failed chunk.
        prompts: templates (``chunk``, ``merge``, ``partial``), or a dict overriding some.
        temperature, focus: as for every summarizer (``lyra_lab.summarize._common``).
    """

    max_concurrency: int = param(3, ge=1)
    chunk_timeout_s: float = param(120.0, gt=0)
    merge_timeout_s: float = param(60.0, gt=0)
    max_tokens: int = param(256, ge=1)
    merge_max_tokens: int = param(384, ge=1)
    temperature: float = temperature_param()
    excerpt_chars: int = param(600, ge=1)
    prompts: Prompts = prompts_param()
    focus: str | None = focus_param()

    def decision(self, chunks: Sequence[Chunk]) -> str:
        return "single_pass" if len(chunks) == 1 else "map_reduce"

    def fold(self, chunks: Sequence[Chunk], backend: Backend, focus: str | None, run: Run) -> Summary:
        n = len(chunks)
        outcomes = self._map(chunks, backend, focus, run)
        partials = []
        for i, (chunk, outcome) in enumerate(zip(chunks, outcomes), 1):
            if outcome.completion is not None:
                run.calls.append(outcome.completion)
                partials.append(outcome.completion.text.strip())
            else:
                run.degrade("chunk_excerpt", f"chunk {i}/{n}", outcome, chunk.turn_ids)
                partials.append(excerpt(chunk, self.excerpt_chars))
        if not run.calls:
            raise run.fail(backend, f"all {n} chunk calls failed")
        if n == 1:
            return run.finish(partials[0])
        return self._reduce(partials, backend, focus, run)

    def _map(self, chunks: Sequence[Chunk], backend: Backend, focus: str | None,
             run: Run) -> list[CallOutcome]:
        """Run the chunk calls, at most ``max_concurrency`` at a time; outcomes in chunk order."""
        n = len(chunks)
        outcomes: list[CallOutcome | None] = [None] * n
        running: dict[Future, tuple[int, float, float]] = {}  # future → (chunk position, start, deadline)
        todo = iter(range(n))
        next_i = next(todo, None)
        while next_i is not None or running:
            while next_i is not None and len(running) < self.max_concurrency:
                messages = self.prompts.messages("chunk", focus=focus, transcript=chunks[next_i].text,
                                                 i=next_i + 1, n=n)
                started = time.monotonic()
                future = start_call(backend, messages, started + self.chunk_timeout_s,
                                    max_tokens=self.max_tokens, temperature=self.temperature)
                running[future] = (next_i, started, started + self.chunk_timeout_s)
                next_i = next(todo, None)
            first_give_up = min(deadline for _, _, deadline in running.values()) + GRACE_S
            wait(running, timeout=max(0.0, first_give_up - time.monotonic()), return_when=FIRST_COMPLETED)
            now = time.monotonic()
            for future, (i, started, deadline) in list(running.items()):
                if future.done() or now >= deadline + GRACE_S:
                    del running[future]
                    outcome = outcome_of(future, started, deadline)
                    outcomes[i] = outcome
                    run.chunk_done(i + 1, n, outcome)
        return outcomes  # type: ignore[return-value]

    def _reduce(self, partials: list[str], backend: Backend, focus: str | None, run: Run) -> Summary:
        run.emit("merge_started", n=len(partials))
        messages = self.prompts.messages("merge", focus=focus, partials=self.prompts.partials_text(partials),
                                         n=len(partials))
        outcome = call(backend, messages, self.merge_timeout_s, max_tokens=self.merge_max_tokens,
                       temperature=self.temperature)
        completion = outcome.completion
        ok = completion is not None
        run.emit("merge_done", ok=ok, duration_s=outcome.duration_s,
                 detail={} if ok else {"error": outcome.error, "fallback": "concatenated partial summaries"})
        if completion is not None:
            run.calls.append(completion)
            return run.finish(completion.text)
        run.degrade("merge_concatenated", "merge", outcome, turn_ids_of(run.chunks))
        return run.finish(self.prompts.partials_text(partials), partial=True)
