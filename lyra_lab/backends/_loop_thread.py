"""One event loop on a daemon thread of its own, where ``OpenAIBackend`` makes every thread's requests.

A thread that makes its own HTTP request is woken for every piece of the answer: at
32 streamed answers in flight (64 chunks each) those wake-ups, each taking the GIL
from another thread, were a third of the client's time, and a thread-per-request
client reached 61% of a minimal asyncio client's throughput
(``benchmarks/fast_server.py``). Here the calling thread hands the request to this
loop and is woken once, with the ``Completion``; the loop reads every stream in
flight as its data arrives. ``run`` carries the caller's context variables (the
retry sink of ``report_retries``, the run's ``StopToken``) into the request's task, and
cancels the task when the caller stops waiting (Ctrl-C) or the caller's run is stopped
(``_stopping``: the token cancels every request it holds in flight, whichever thread waits
for it, and the waiting thread gets ``CallsStopped``).

The loop starts on first use; a forked child starts its own (the parent's thread
does not exist there). The thread is a daemon: it ends with the interpreter.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import threading
from typing import Any, Coroutine, TypeVar

from lyra_lab.backends._stopping import CallsStopped, stop_token

T = TypeVar("T")


class LoopThread:
    """An asyncio event loop running forever on a daemon thread, for coroutines sent from other threads."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.pid = os.getpid()
        self.thread = threading.Thread(target=self.loop.run_forever, name="lyra-lab-requests", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop (in a copy of the caller's context) and wait for its result.

        Raises:
            RuntimeError: called from the loop's own thread (it would wait for itself).
            CallsStopped: the caller's run was stopped (before or while the request was in flight).
            Whatever ``coro`` raises.
        """
        if threading.current_thread() is self.thread:
            coro.close()
            raise RuntimeError("a backend call made from its own request loop would wait for itself")
        token = stop_token()
        if token is not None and token.stopped:
            coro.close()
            raise CallsStopped("the run was stopped; no request sent")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            with token.flying(future) if token is not None else contextlib.nullcontext():
                return future.result()
        except concurrent.futures.CancelledError:
            if token is not None and token.stopped:
                raise CallsStopped("the run was stopped while its request was in flight") from None
            raise
        except BaseException:
            future.cancel()  # the caller stopped waiting (Ctrl-C, a bug): the request stops too
            raise


_lock = threading.Lock()
_current: LoopThread | None = None


def loop_thread() -> LoopThread:
    """This process's request loop, started on first use."""
    global _current
    with _lock:
        if _current is None or _current.pid != os.getpid() or not _current.thread.is_alive():
            _current = LoopThread()
        return _current


def _forget_after_fork() -> None:
    global _current, _lock
    _current, _lock = None, threading.Lock()  # the parent's thread is not in the child; its lock may be held


os.register_at_fork(after_in_child=_forget_after_fork)
