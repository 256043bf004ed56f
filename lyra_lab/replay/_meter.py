"""Per-phase accounting of a replay: calls, tokens, dollars, wall time, per-call latencies.

Every LLM call a strategy made comes back as a ``Completion`` (inside a
``Summary`` or a ``RollupReport``); the meter adds them up per phase and writes
one ``llm_call`` event per call to the run log.  A call served from the response
cache keeps its original usage and latency (``cached=True``): the meter counts it
in ``usage``/``latencies_s`` like any call, and only non-cached calls in ``paid``,
so a re-run reports the same figures as the run that paid, plus what it paid.  Embedding calls are timed by
wrapping the embedder (``MeteredEmbedder``).

It also counts, per replay, how many attempts each LLM call needed (``attempt_tally``, from
``Completion.attempts``; a call that failed for good counts by why it stopped) and every fallback the
strategies reported (``degradation_tally``; one ``degraded`` event per fallback in the run log).
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Callable, Iterable, Sequence

import numpy as np

from lyra_lab._degradation import Degradation, DegradationTally
from lyra_lab.backends import AttemptTally, Completion, Embedder, EmbedderWrapper, Usage
from lyra_lab.replay._types import PhaseCost

EventSink = Callable[..., None]


class PhaseMeter:
    """Accumulates ``PhaseCost`` per phase (owner thread only)."""

    def __init__(self, log: EventSink | None = None):
        self._log = log
        self._usage: dict[str, Usage] = defaultdict(Usage)
        self._wall: dict[str, float] = defaultdict(float)
        self._latencies: dict[str, list[float]] = defaultdict(list)
        self._paid: dict[str, Usage] = defaultdict(Usage)
        self._attempts: dict[str, AttemptTally] = defaultdict(AttemptTally)
        self._degraded = DegradationTally()
        self.cached_calls = 0

    def completions(self, phase: str, calls: Iterable[Completion], **context: object) -> None:
        """Record the LLM calls of one operation and log each one."""
        for call in calls:
            usage = call.usage
            if call.cached and usage.cached_calls == 0:
                usage = usage + Usage(cached_calls=1)
            self._usage[phase] = self._usage[phase] + usage
            self._latencies[phase].append(float(call.latency_s))
            if not call.cached:
                self._paid[phase] = self._paid[phase] + usage
            self.cached_calls += int(bool(call.cached))
            self._attempts[phase] = self._attempts[phase] + AttemptTally.of(answered=[0 if call.cached else
                                                                                     call.attempts])
            if self._log is not None:
                self._log(
                    "llm_call", phase=phase, backend=call.backend, model=call.model,
                    latency_s=round(float(call.latency_s), 6),
                    ttft_s=None if call.ttft_s is None else round(float(call.ttft_s), 6),
                    prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                    cost_usd=usage.cost_usd, cached=bool(call.cached), simulated=bool(call.simulated),
                    estimated=bool(usage.estimated), finish_reason=call.finish_reason,
                    attempts=0 if call.cached else call.attempts, **context,
                )

    def degradations(self, phase: str, degraded: Iterable[Degradation], **context: object) -> None:
        """Count the fallbacks of one operation (and its calls that failed for good); log each one."""
        degraded = tuple(degraded)
        self._degraded = self._degraded + DegradationTally.of(degraded)
        failed = [d.cause for d in degraded if d.failed_call]
        if failed:
            self._attempts[phase] = self._attempts[phase] + AttemptTally.of(failed=failed)
        if self._log is not None:
            for d in degraded:
                self._log("degraded", phase=phase, **d.fields(), **context)

    def degradation_tally(self) -> DegradationTally:
        """Every fallback recorded so far, per ``(stage, kind)``."""
        return self._degraded

    def attempt_tally(self, phase: str | None = None) -> AttemptTally:
        """How many attempts the LLM calls of ``phase`` (None: of every phase) needed, and the calls that failed."""
        if phase is not None:
            return self._attempts.get(phase, AttemptTally())
        return sum(self._attempts.values(), AttemptTally())

    def call(self, phase: str, latency_s: float, usage: Usage | None = None) -> None:
        """Record one non-LLM call (an embedding batch) of a phase."""
        self._usage[phase] = self._usage[phase] + (usage or Usage(calls=1))
        self._paid[phase] = self._paid[phase] + (usage or Usage(calls=1))
        self._latencies[phase].append(float(latency_s))
        self._wall[phase] += float(latency_s)

    def wall(self, phase: str, seconds: float) -> None:
        """Add wall time spent in a phase (one summarize or compact operation)."""
        self._wall[phase] += float(seconds)

    def phases(self, names: Sequence[str] = ()) -> dict[str, PhaseCost]:
        keys = list(dict.fromkeys([*names, *self._usage, *self._wall]))
        return {
            k: PhaseCost(k, self._usage.get(k, Usage()), self._wall.get(k, 0.0), tuple(self._latencies.get(k, ())),
                         self._paid.get(k, Usage()))
            for k in keys
        }


class MeteredEmbedder(EmbedderWrapper):
    """An embedder wrapper that times every ``embed`` call into the ``embed`` phase."""

    def __init__(self, inner: Embedder, meter: PhaseMeter):
        super().__init__(inner)
        self._meter = meter

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        start = time.perf_counter()
        out = self.inner.embed(texts, kind=kind)
        self._meter.call("embed", time.perf_counter() - start, Usage(calls=1))
        return out
