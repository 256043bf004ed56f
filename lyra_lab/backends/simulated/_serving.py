"""The simulated server's serving state: the request log, serving slots, replies and their usage.

Both ways of answering (one JSON body in ``_server.py``, server-sent events in
``_sse.py``) take a slot, wait, reply and release through one ``Serving``, so
neither module needs the other.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from typing import Any

from lyra_lab.backends.simulated._behaviour import (Behaviour, SimulatedSpec, count_pieces, extractive_reply,
                                                    messages_text)


@dataclasses.dataclass
class RequestRecord:
    """One request as the server saw it (timestamps are ``time.monotonic()``).

    ``has_auth`` says whether an Authorization header came; its value is never kept. ``received`` is
    when the request's first bytes reached the server (``_arrival.ArrivalStampedH11``), its answer's clock.
    """

    index: int
    path: str
    received: float
    outcome: str = "ok"
    status: int = 200
    stream: bool = False
    model: str | None = None
    max_tokens: int | None = None
    started: float | None = None
    finished: float | None = None
    slot_wait_s: float = 0.0  # how long it waited for a serving slot
    prompt_tokens: int = 0
    completion_tokens: int = 0
    has_auth: bool = False
    retry_after: float | None = None  # what a 429 asked the client to wait
    rule: int | None = None  # the index of the fault rule that decided its outcome, if one did
    params: dict[str, Any] = dataclasses.field(default_factory=dict)  # the body minus messages
    body: dict[str, Any] | None = None  # the whole JSON body, kept only when the server keeps bodies


#: How long before an exact deadline ``Pace.until`` stops sleeping on a timer and yields to the loop instead.
EXACT_S = 0.002


@dataclasses.dataclass(frozen=True)
class Pace:
    """When each part of one answer is due, counted from ``start`` (``Serving.pace``: its receipt plus any slot wait).

    The first token (a stream's first chunk) is due ``first_s`` after ``start``, token ``n``
    ``n / tokens_per_s`` after that. Each wait sleeps until its own deadline, so the time a
    sleep oversleeps (the event loop wakes at millisecond steps) is not added up token after
    token: an answer of ``n`` tokens ends at ``start + first_s + n / tokens_per_s`` as its spec
    says, streamed or not, and a token already due goes out without a sleep.

    Attributes:
        start: when its clock began (``time.monotonic()``, the event loop's clock too).
        first_s: time to first token.
        tokens_per_s: generation rate after it (None: instant).
    """

    start: float
    first_s: float
    tokens_per_s: float | None

    def due(self, n_tokens: int) -> float:
        """When the answer's first ``n_tokens`` tokens are out (0: the first token), a ``time.monotonic()`` instant."""
        return self.start + self.first_s + (n_tokens / self.tokens_per_s if self.tokens_per_s else 0.0)

    async def until(self, n_tokens: int, exact: bool = False) -> None:
        """Sleep until ``due(n_tokens)`` (not at all when it has passed).

        ``exact``: the event loop's timers fire up to a couple of milliseconds late (they tick in whole
        milliseconds), 3% of a 52 ms answer; a whole answer's deadline, and a stream's first and last
        token, are met by sleeping to ``EXACT_S`` before them and yielding to the loop until they pass
        (not each token of a stream, half a millisecond apart: the yielding would keep a core busy).
        """
        deadline = self.due(n_tokens)
        delay = deadline - time.monotonic() - (EXACT_S if exact else 0.0)
        if delay > 0:
            await asyncio.sleep(delay)
        while exact and time.monotonic() < deadline:
            await asyncio.sleep(0)


class Serving:
    """What every request shares: the spec, its behaviour, the log and the serving slots."""

    def __init__(self, spec: SimulatedSpec):
        self.spec = spec
        self.behaviour = Behaviour(spec)
        self.stopping = threading.Event()
        self.max_serving = 0  # requests holding a serving slot at most
        self._lock = threading.Lock()
        self._log: list[RequestRecord] = []
        self._serving = 0
        self._slots: asyncio.Semaphore | None = None

    @property
    def log(self) -> list[RequestRecord]:
        with self._lock:
            return list(self._log)

    def reset(self) -> None:
        """Forget the log, the counters and any unused script."""
        self.behaviour.clear()
        with self._lock:
            self._log.clear()
            self.max_serving = 0

    def record(self, path: str, has_auth: bool, received: float | None = None) -> RequestRecord:
        """Log a request; ``received``: when it reached the server (``time.monotonic()``; None: now)."""
        with self._lock:
            rec = RequestRecord(len(self._log), path, time.monotonic() if received is None else received,
                                has_auth=has_auth)
            self._log.append(rec)
            return rec

    async def enter(self, rec: RequestRecord) -> None:
        """Take a serving slot (waiting in FIFO order when ``max_concurrency`` are taken)."""
        if self.spec.max_concurrency is not None:
            if self._slots is None:  # created on the server's own loop
                self._slots = asyncio.Semaphore(self.spec.max_concurrency)
            queued = time.monotonic()
            await self._slots.acquire()
            rec.slot_wait_s = time.monotonic() - queued
        with self._lock:
            self._serving += 1
            self.max_serving = max(self.max_serving, self._serving)
        rec.started = time.monotonic()

    def leave(self, rec: RequestRecord) -> None:
        with self._lock:
            self._serving -= 1
        if self._slots is not None:
            self._slots.release()
        rec.finished = time.monotonic()

    def pace(self, rec: RequestRecord) -> Pace:
        """The deadlines of ``rec``'s answer (its time to first token drawn), once it holds a serving slot.

        Its clock starts when the request was received, plus its wait for a slot: reading and
        deciding on the request are inside its time to first token, as on a real server.
        """
        return Pace(rec.received + rec.slot_wait_s, self.behaviour.latency(), self.spec.tokens_per_s)

    async def hang(self) -> None:
        end = time.monotonic() + self.spec.hang_s
        while time.monotonic() < end and not self.stopping.is_set():
            await asyncio.sleep(0.02)

    def reply(self, rec: RequestRecord, messages: list[dict[str, Any]]) -> tuple[list[str], str]:
        user = [m for m in messages if m.get("role") == "user"]
        verdict = self.spec.judge.reply(messages_text(user[-1:]), self.spec.seed) \
            if self.spec.judge is not None and user else None
        if verdict is not None:  # a simulated judge (SimulatedSpec.judge) grading a judge prompt
            pieces, finish = [verdict], "stop"
        else:
            pieces, finish = extractive_reply(messages, int(rec.max_tokens or self.spec.default_max_tokens),
                                              self.spec.seed)
        rec.prompt_tokens, rec.completion_tokens = count_pieces(messages), len(pieces)
        return pieces, finish

    def usage(self, rec: RequestRecord) -> dict[str, int]:
        return {"prompt_tokens": rec.prompt_tokens, "completion_tokens": rec.completion_tokens,
                "total_tokens": rec.prompt_tokens + rec.completion_tokens}
