"""Stopping a run's calls: an interrupt cancels the calls in flight and every retry they would make.

Ctrl-C reaches the main thread alone, but a run's calls are made on other threads too (cell
threads, the summarizers' call threads) and on the request loop (``_loop_thread``); left alone
they go on sending requests, and retrying, after the run has stopped and closed its log.  A
``StopToken`` is what they share: the runner makes one per run and sets it as the calling
context's (``stoppable``); every thread that makes calls for the run carries it (the context is
copied into cell threads, and ``run_in_thread`` passes it to a call's thread).  When the run
stops, ``StopToken.stop`` cancels the requests the loop has in flight for it, and from then
on a call of the run sends no further attempt: it raises ``CallsStopped`` before the attempt,
instead of a retry, and out of a backoff sleep.  ``CallsStopped`` is a ``KeyboardInterrupt``:
it goes through a strategy's fallbacks (which catch ``BackendError``) and fails nothing; the
cell it stops gets no rows, so a resume runs it again.

A call made outside any run (no token) is never stopped here.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from typing import Iterator, Protocol


class Cancellable(Protocol):
    """A request in flight that can be cancelled (a ``concurrent.futures.Future`` of the request loop)."""

    def cancel(self) -> bool:
        """Cancel it; false when it had already finished."""
        ...


class CallsStopped(KeyboardInterrupt):
    """A call of a run that was stopped: no further request is sent for it."""


class StopToken:
    """Whether a run was stopped, and the requests its calls have in flight on the request loop."""

    def __init__(self) -> None:
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._in_flight: set[Cancellable] = set()

    @property
    def stopped(self) -> bool:
        """Whether ``stop`` was called."""
        return self._stopped.is_set()

    def stop(self) -> None:
        """Stop the run's calls: cancel the requests in flight; every later attempt raises ``CallsStopped``."""
        self._stopped.set()
        with self._lock:
            flying, self._in_flight = list(self._in_flight), set()
        for future in flying:
            future.cancel()

    def check(self, backend: str) -> None:
        """Raise ``CallsStopped`` when the run was stopped (before an attempt is sent)."""
        if self._stopped.is_set():
            raise CallsStopped(f"{backend}: the run was stopped; no request sent")

    def sleep(self, seconds: float) -> None:
        """A backoff sleep that ends, raising ``CallsStopped``, as soon as the run is stopped."""
        if self._stopped.wait(max(0.0, seconds)):
            raise CallsStopped("the run was stopped during a retry's backoff")

    @contextlib.contextmanager
    def flying(self, future: Cancellable) -> Iterator[None]:
        """Hold ``future`` (a request on the loop) as in flight, so ``stop`` cancels it."""
        with self._lock:
            if self._stopped.is_set():
                future.cancel()
            self._in_flight.add(future)
        try:
            yield
        finally:
            with self._lock:
                self._in_flight.discard(future)


_TOKEN: contextvars.ContextVar[StopToken | None] = contextvars.ContextVar("lyra_lab_stop_token", default=None)


def stop_token() -> StopToken | None:
    """The stop token of the calling context's run (None: a call outside any run)."""
    return _TOKEN.get()


@contextlib.contextmanager
def stoppable(token: StopToken | None) -> Iterator[StopToken | None]:
    """Make ``token`` the calling context's: calls made in it (and threads that carry it) stop with it."""
    reset = _TOKEN.set(token)
    try:
        yield token
    finally:
        _TOKEN.reset(reset)
