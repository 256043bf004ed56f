"""One backend call under a deadline that bounds the whole call, run on a daemon thread.

``backend.complete(messages, deadline=..., max_tokens=..., temperature=...)``
gets the deadline itself: the backend retries within it, each attempt bounded
by the backend's own ``timeout_s`` (a strategy never widens that), and gives up
at the deadline with a ``BackendError`` that says so.  The caller also stops
waiting shortly after the deadline (``GRACE_S``, for the backend's own error to
arrive), so a backend that ignores its deadline cannot stall a summary.  Calls
run on daemon threads rather than a ``ThreadPoolExecutor`` because the executor
joins its workers at interpreter exit: one hung call would then hang the
process.  A thread that finished a call waits a few seconds for the next one
(``CallThreads``): starting a thread per call cost ~0.1 ms of CPU a call, ~7% of
a grid's client time against a fast server (``docs/performance.md``, "A fast
server").  An abandoned call's late answer is discarded.
"""

from __future__ import annotations

import contextvars
import os
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Callable, ParamSpec, Sequence, TypeVar

from lyra_lab._degradation import Cause
from lyra_lab.backends import Backend, BackendError, Completion, Message, Recurs, stop_token, stoppable
from lyra_lab.chunking import Chunk

P = ParamSpec("P")
R = TypeVar("R")

#: How long past a call's deadline the caller still waits for the backend's own answer or error.
GRACE_S = 0.25


@dataclass(frozen=True)
class CallOutcome:
    """A call's completion, or the error that stopped it (why, after how many attempts), and how long it took.

    Attributes:
        completion: the answer, or None when the call failed.
        error: the failure's message, or None.
        duration_s: from the start of the call to its answer or failure.
        cause: why it failed (``attempts``, ``deadline``, ``not_retryable``), or None.
        attempts: requests the failed call sent, when the backend said (None: it did not, or no failure).
        status: the HTTP status of the failure, when there was one.
        recurs: the failure would happen again (``BackendError.recurs``, passed on), or None.
    """

    completion: Completion | None
    error: str | None
    duration_s: float
    cause: Cause | None = None
    attempts: int | None = None
    status: int | None = None
    recurs: Recurs | None = None


def start_call(backend: Backend, messages: Sequence[Message], deadline: float, **params: object) -> Future:
    """Start ``backend.complete(messages, deadline=deadline, **params)`` on a daemon thread; return its future."""
    return run_in_thread(backend.complete, list(messages), deadline=deadline, **params)


class CallThreads:
    """Daemon threads that run calls, each waiting ``idle_s`` for another before it ends.

    ``idle`` counts the threads waiting for a call that no call was promised to: a call
    submitted while one waits is promised to it (any waiting thread takes it), otherwise
    a new thread starts. A thread whose wait runs out ends only if it is not promised.
    Each call runs in a fresh, empty ``contextvars.Context``, as on a new thread.
    """

    def __init__(self, idle_s: float = 5.0):
        self.idle_s = idle_s
        self._calls: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self.started = 0  # threads started so far (for tests)

    def run(self, call: Callable[[], None]) -> None:
        """Run ``call()`` on one of the threads (it must not raise)."""
        self._calls.put(call)
        with self._lock:
            if self._idle:
                self._idle -= 1
                return
            self.started += 1
        threading.Thread(target=self._work, name="lyra-summarize-call", daemon=True).start()

    def _work(self) -> None:
        while True:
            try:
                call = self._calls.get(timeout=self.idle_s)
            except queue.Empty:
                with self._lock:
                    if self._idle:  # no call is promised to a waiting thread beyond those left
                        self._idle -= 1
                        return
                continue  # a call promised to a waiting thread is on its way
            try:
                contextvars.Context().run(call)
            finally:
                with self._lock:
                    self._idle += 1


_CALL_THREADS = CallThreads()


def _forget_after_fork() -> None:
    """A forked child has none of its parent's threads: its calls start threads of its own."""
    global _CALL_THREADS
    _CALL_THREADS = CallThreads()


os.register_at_fork(after_in_child=_forget_after_fork)


def run_in_thread(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> Future[R]:
    """Run ``fn(*args, **kwargs)`` on a daemon thread; its result or exception goes to the returned future."""
    future: Future[R] = Future()
    token = stop_token()  # the call's thread stops with the caller's run (``backends._stopping``)

    def target() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            with stoppable(token):
                future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
            future.set_exception(exc)

    _CALL_THREADS.run(target)
    return future


def outcome_of(future: Future, started: float, deadline: float) -> CallOutcome:
    """Wait for ``future`` until ``deadline`` (plus ``GRACE_S``); failures become an error string and a cause.

    Only ``BackendError`` and timeouts are failures of the call; any other
    exception is a bug and propagates.
    """
    try:
        completion = future.result(timeout=max(0.0, deadline + GRACE_S - time.monotonic()))
        return CallOutcome(completion, None, time.monotonic() - started)
    except BackendError as exc:
        return CallOutcome(None, str(exc), time.monotonic() - started, exc.gave_up, exc.attempts, exc.status,
                           exc.recurs)
    except TimeoutError:
        return CallOutcome(None, f"no answer within {deadline - started:g}s (timed out at the call's deadline)",
                           time.monotonic() - started, "deadline")


def call(backend: Backend, messages: Sequence[Message], deadline_s: float, **params: object) -> CallOutcome:
    """One call that must be over within ``deadline_s`` seconds, retries included (module docstring)."""
    started = time.monotonic()
    deadline = started + deadline_s
    return outcome_of(start_call(backend, messages, deadline, **params), started, deadline)


def excerpt(chunk: Chunk, chars: int) -> str:
    """The first ``chars`` characters of a chunk's new text, marked as unsummarized."""
    body = chunk.text[chunk.overlap_chars:].strip()
    cut = body[:chars] + ("…" if len(body) > chars else "")
    return f"[not summarized: raw excerpt] {cut}"
