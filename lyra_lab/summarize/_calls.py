"""One backend call with a hard deadline, run on a daemon thread.

``backend.complete(messages, timeout=..., max_tokens=..., temperature=...)``
gets the timeout itself (a real backend aborts its HTTP request), and the
caller also stops waiting at the deadline (``Future.result(timeout)``), so a
backend that ignores its timeout cannot stall a summary.  Calls run on daemon
threads rather than a ``ThreadPoolExecutor`` because the executor joins its
workers at interpreter exit: one hung call would then hang the process.  An
abandoned call's late answer is discarded.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from lyra_lab.backends import Backend, BackendError, Completion, Message
from lyra_lab.chunking import Chunk


@dataclass(frozen=True)
class CallOutcome:
    """A call's completion, or the error that stopped it, and how long it took."""

    completion: Completion | None
    error: str | None
    duration_s: float


def start_call(backend: Backend, messages: Sequence[Message], **params: Any) -> Future:
    """Start ``backend.complete(messages, **params)`` on a daemon thread; return its future."""
    return run_in_thread(backend.complete, list(messages), **params)


def run_in_thread(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
    future: Future = Future()

    def target() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
            future.set_exception(exc)

    threading.Thread(target=target, name="lyra-summarize-call", daemon=True).start()
    return future


def outcome_of(future: Future, started: float, timeout_s: float) -> CallOutcome:
    """Wait for ``future`` until ``started + timeout_s``; failures become an error string.

    Only ``BackendError`` and timeouts are failures of the call; any other
    exception is a bug and propagates.
    """
    try:
        completion = future.result(timeout=max(0.0, started + timeout_s - time.monotonic()))
        return CallOutcome(completion, None, time.monotonic() - started)
    except BackendError as exc:
        return CallOutcome(None, str(exc), time.monotonic() - started)
    except TimeoutError:
        return CallOutcome(None, f"no answer within {timeout_s:g}s (timed out)", time.monotonic() - started)


def call(backend: Backend, messages: Sequence[Message], timeout_s: float, **params: Any) -> CallOutcome:
    """One call with a deadline (see the module docstring)."""
    started = time.monotonic()
    return outcome_of(start_call(backend, messages, timeout=timeout_s, **params), started, timeout_s)


def excerpt(chunk: Chunk, chars: int) -> str:
    """The first ``chars`` characters of a chunk's new text, marked as unsummarized."""
    body = chunk.text[chunk.overlap_chars:].strip()
    cut = body[:chars] + ("…" if len(body) > chars else "")
    return f"[not summarized: raw excerpt] {cut}"
