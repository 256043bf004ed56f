"""Our retry policy for backend calls, and how a failure reaches the user.

The openai client's own retries are switched off (``max_retries=0``) so that
this policy is the only one: exponential backoff with jitter on 408, 429, 5xx
overload codes (500/502/503/504/529), timeouts, connection errors and broken
streams, honouring the server's ``Retry-After``. A call that fails for good
raises ``BackendError`` with the HTTP status, the provider's own message, the
attempts it made and why it stopped (``gave_up``).

Attempts per call: 8 by default, sized to the fault rate. If each attempt fails
independently with probability p (a transient fault: overload, rate limit,
a broken body), a call with n attempts fails for good with probability p**n,
and at least one of N calls does with probability 1 - (1 - p**n)**N. For
N = 1,000 calls::

    attempts n            4       5       6       7       8       9
    p = 20%           79.8%   27.4%    6.2%    1.3%    0.26%   0.05%
    p = 17%           56.6%   13.2%    2.4%    0.41%   0.07%   0.01%
    p =  5%            0.62%   0.03%  0.002%  <1e-4%  <1e-5%  <1e-6%

The default is the smallest n that keeps a 1,000-call run at a 20% fault rate
under a 1% chance of losing any call: n = 8 (0.26%; at 17%, the rate issue 26
observed, 0.07%; at 5%, 4e-8). Four attempts, the old default, lost at least
one call in 4 of 5 such runs (p**4 = 1 call in 625)::

    >>> [f"{loss_chance(p, 8):.2%}" for p in (0.20, 0.17, 0.05)]
    ['0.26%', '0.07%', '0.00%']
    >>> min(n for n in range(1, 20) if loss_chance(0.20, n) < 0.01) == DEFAULT_MAX_ATTEMPTS
    True

Retrying costs nothing while calls succeed, and a failing call's extra
attempts are bounded by its caller's deadline. Faults that are not
independent (an outage) defeat any attempt count: those calls end as
``BackendError`` and are counted as such. ``BackendConfig.max_attempts`` sets
it per backend (the ``local`` preset keeps 4: see ``_presets``).

Deadlines: each attempt is bounded by the backend's ``timeout_s`` (every wait
for the server: connect, first byte, each stream chunk). A caller bounds the
whole call with a ``deadline`` (a ``time.monotonic()`` instant): an attempt
then gets at most the time left, and no attempt is started that would have
less than ``min(timeout_s, MIN_ATTEMPT_S)`` left after its backoff; the call
raises ``BackendError`` with ``gave_up == "deadline"`` instead.

Every retry is reported twice: a warning on the ``lyra_lab.backends`` logger,
and a ``RetryEvent`` to the retry sink of the calling context, if one is set
(``report_retries``): the experiment runner sets one per cell so that each
retry lands in the run log with its cell id.  A sink sees no secret: the
provider's message is masked with the backend's secrets and any URL
credentials, and cut to 200 characters.

A call made for a run that was stopped (``_stopping``: Ctrl-C, an interrupt in a notebook)
sends no further attempt: it raises ``CallsStopped`` before an attempt, instead of a retry
(no retry is reported) and out of a backoff sleep.
"""

from __future__ import annotations

import contextlib
import contextvars
import email.utils
import json
import logging
import random
import re
import time
from dataclasses import asdict, dataclass
from typing import Any, Awaitable, Callable, Iterable, Iterator, NamedTuple, TypeVar

import tenacity

from lyra_lab.backends._stopping import CallsStopped, stop_token
from lyra_lab.backends._types import BackendError, GaveUp

log = logging.getLogger("lyra_lab.backends")
T = TypeVar("T")

RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504, 529})
DEFAULT_MAX_ATTEMPTS = 8  # sized to the fault rate: see the module docstring and loss_chance
MIN_ATTEMPT_S = 1.0  # an attempt that would get less time than this (or timeout_s) before the deadline is not made


def loss_chance(fault_rate: float, attempts: int, calls: int = 1000) -> float:
    """The chance that at least one of ``calls`` calls fails all its ``attempts``: 1 - (1 - p**n)**N.

    Faults are taken as independent per attempt (transient overloads, rate
    limits, broken bodies), each with probability ``fault_rate``.
    """
    return 1.0 - (1.0 - fault_rate ** attempts) ** calls


@dataclass(frozen=True)
class RetryEvent:
    """One failed attempt that will be retried.

    Attributes:
        backend: the backend's name.
        attempt: the number of the attempt that failed (1 = the first).
        max_attempts: the policy's total attempts.
        status: the HTTP status, or None when the server never answered (timeout, connection).
        error: the kind of failure (the exception class: ``RateLimitError``, ``APITimeoutError``,
            ``StreamError``, ``JSONDecodeError``…).
        wait_s: the backoff before the next attempt (seconds).
        retry_after_s: what the server asked to wait, if it did.
        message: the provider's message, masked and cut to 200 characters.
    """

    backend: str
    attempt: int
    max_attempts: int
    status: int | None
    error: str
    wait_s: float
    retry_after_s: float | None
    message: str

    def fields(self) -> dict[str, Any]:
        return asdict(self)


RetrySink = Callable[[RetryEvent], None]
_SINK: contextvars.ContextVar[RetrySink | None] = contextvars.ContextVar("lyra_lab_retry_sink", default=None)
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")


@contextlib.contextmanager
def report_retries(sink: RetrySink | None) -> Iterator[None]:
    """Send every retry of calls made in this context (this thread, this task) to ``sink``.

    A sink that raises is logged and ignored: reporting never breaks a call.
    """
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


def _mask(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return _URL_CREDENTIALS.sub("***@", text)


class StreamError(Exception):
    """A response stream that was cut short or held malformed JSON (retryable)."""


class DeadlineExceeded(StreamError):
    """The call's deadline passed while an answer was still streaming in."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry a failing call.

    Attributes:
        max_attempts: total attempts, the first included (1 = no retry); the
            default, 8, is sized to the fault rate (module docstring).
        base_delay_s: first backoff delay; it doubles each retry, plus up to
            ``base_delay_s`` of random jitter.
        max_delay_s: cap on one backoff delay.
        max_retry_after_s: cap on a server's ``Retry-After`` (a server asking
            for an hour is retried after this cap rather than stalling the run).
    """

    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0
    max_retry_after_s: float = 60.0

    def __post_init__(self) -> None:
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int) or self.max_attempts < 1:
            raise ValueError(f"max_attempts must be an integer >= 1, got {self.max_attempts!r}")
        for name in ("base_delay_s", "max_delay_s", "max_retry_after_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise ValueError(f"{name} must be a number >= 0, got {value!r}")


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of a failed call, if the server answered at all."""
    import openai  # lazily: importing openai costs ~0.5 s, and most users of this package never call it

    return getattr(exc, "status_code", None) if isinstance(exc, openai.APIError) else None


def is_retryable(exc: BaseException) -> bool:
    """True for overload, rate-limit, timeout, connection and broken-stream failures."""
    import openai

    if isinstance(exc, (StreamError, json.JSONDecodeError, openai.APIConnectionError)):
        return True  # APITimeoutError is an APIConnectionError
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRYABLE_STATUSES
    # An error event inside a 200 stream (no status): the provider failed mid-answer.
    return isinstance(exc, openai.APIError) and not isinstance(exc, openai.APIResponseValidationError)


def retry_after_s(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``Retry-After``), if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:  # the HTTP-date form
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def provider_message(exc: BaseException) -> str:
    """The provider's own words: ``error.message`` of the JSON body, else the raw text."""
    import openai

    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        return json.dumps(body)[:500]
    if isinstance(body, str) and body.strip():
        return body.strip()
    if isinstance(exc, openai.APITimeoutError):
        return "request timed out (client timeout)"
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if isinstance(exc, (StreamError, json.JSONDecodeError)) else text


def to_backend_error(backend: str, exc: BaseException, attempts: int,
                     secrets: Iterable[str] = (), gave_up: GaveUp | None = None) -> BackendError:
    """A ``BackendError`` from a final failure, with any secret masked out of the message.

    ``gave_up`` None: ``attempts`` for a retryable failure, else ``not_retryable``.
    """
    message = _mask(provider_message(exc), secrets)
    if gave_up is None:
        gave_up = "attempts" if is_retryable(exc) else "not_retryable"
    return BackendError(backend, message, status=status_of(exc), attempts=attempts, gave_up=gave_up)


class _WaitRetryAfterOrBackoff(tenacity.wait.wait_base):
    """Wait what the server asked for, else exponential backoff with jitter."""

    def __init__(self, policy: RetryPolicy):
        self.policy = policy

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        asked = retry_after_s(exc) if exc is not None else None
        p = self.policy
        if asked is not None:
            # Never earlier than asked, plus up to one base delay (at most the wait
            # itself) of jitter: clients limited together would otherwise all come
            # back at the same instant and be limited again.
            honoured = min(asked, p.max_retry_after_s)
            return honoured + random.uniform(0, min(p.base_delay_s, honoured))
        # base * 2**(n-1) plus up to one base of jitter, so that clients
        # failing together do not retry together; capped at max_delay_s.
        exponential = p.base_delay_s * 2 ** min(retry_state.attempt_number - 1, 32)
        return min(p.max_delay_s, exponential + random.uniform(0, p.base_delay_s))


def _retry_kwargs(policy: RetryPolicy, backend: str, secrets: Iterable[str] = ()) -> dict[str, Any]:
    secrets = tuple(secrets)

    def before_sleep(state: tenacity.RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        status = status_of(exc) if exc is not None else None
        wait_s = state.next_action.sleep if state.next_action else 0.0
        log.warning(
            "%s: attempt %d/%d failed (%s%s); retrying in %.2fs",
            backend, state.attempt_number, policy.max_attempts,
            f"HTTP {status}: " if status else "", type(exc).__name__, wait_s,
        )
        sink = _SINK.get()
        if sink is None or exc is None:
            return
        event = RetryEvent(backend, state.attempt_number, policy.max_attempts, status, type(exc).__name__,
                           round(float(wait_s), 6), retry_after_s(exc), _mask(provider_message(exc), secrets)[:200])
        try:
            sink(event)
        except Exception:  # noqa: BLE001 - reporting a retry never breaks the call
            log.warning("retry sink %r failed; ignored", sink, exc_info=True)

    return dict(
        wait=_WaitRetryAfterOrBackoff(policy),
        retry=tenacity.retry_if_exception(is_retryable),
        before_sleep=before_sleep,
        reraise=True,
    )


def _is_call_failure(exc: BaseException) -> bool:
    import openai

    return isinstance(exc, (openai.APIError, StreamError, json.JSONDecodeError))


class _Stop:
    """Stop after ``max_attempts``, or when the next attempt would have too little time before the deadline.

    Remembers which of the two stopped the call (``reason``).
    """

    def __init__(self, policy: RetryPolicy, timeout_s: float, deadline: float | None):
        self.max_attempts = policy.max_attempts
        self.deadline = deadline
        self.min_left = min(timeout_s, MIN_ATTEMPT_S)
        self.reason: GaveUp = "attempts"

    def __call__(self, state: tenacity.RetryCallState) -> bool:
        if state.attempt_number >= self.max_attempts:
            self.reason = "attempts"
            return True
        if self.deadline is not None and self.deadline - time.monotonic() - state.upcoming_sleep < self.min_left:
            self.reason = "deadline"
            return True
        return False


class CallTimes(NamedTuple):
    """The time one call may take: each attempt at most ``timeout_s``, every attempt before ``deadline``."""

    timeout_s: float
    deadline: float | None = None  # a ``time.monotonic()`` instant; None: no deadline


def call_with_retries(
    fn: Callable[[float], T], policy: RetryPolicy, backend: str, secrets: Iterable[str] = (), *,
    times: CallTimes,
) -> tuple[T, int]:
    """Run ``fn(attempt_timeout_s)`` under ``policy`` until it succeeds; return its result and the attempts it took.

    Each attempt gets ``times.timeout_s``, or the time left before ``times.deadline`` if
    that is less; no attempt starts that would get less than
    ``min(timeout_s, MIN_ATTEMPT_S)`` (module docstring).

    Args:
        fn: one attempt, given the seconds it may take.
        policy: how often and how patiently to retry.
        backend: the backend's name, for errors.
        secrets: strings (API keys) removed from every error message.
        times: the per-attempt timeout and the call's deadline.

    Raises:
        BackendError: the call failed for good (status, provider message,
            attempts, ``gave_up``), or the deadline passed before the first attempt.
    """
    attempts = 0
    timeout_s, deadline = times
    stop = _Stop(policy, timeout_s, deadline)
    token = stop_token()

    def once() -> T:
        nonlocal attempts
        if token is not None:
            token.check(backend)
        attempts += 1
        try:
            return fn(_attempt_timeout(times))
        except Exception as exc:
            if token is not None and token.stopped:  # not retried, nor reported: the run has stopped
                raise CallsStopped(f"{backend}: the run was stopped during an attempt") from exc
            raise

    _check_started(backend, deadline)
    try:
        sleep = token.sleep if token is not None else time.sleep
        return tenacity.Retrying(stop=stop, sleep=sleep, **_retry_kwargs(policy, backend, secrets))(once), attempts
    except Exception as exc:
        if not _is_call_failure(exc):
            raise  # a bug, not a failed call
        raise _given_up(exc, backend, stop, attempts, secrets) from exc


async def acall_with_retries(
    fn: Callable[[float], Awaitable[T]], policy: RetryPolicy, backend: str, secrets: Iterable[str] = (), *,
    times: CallTimes,
) -> tuple[T, int]:
    """``call_with_retries`` on an event loop: ``fn`` is a coroutine function, backoff an ``asyncio.sleep``.

    Raises:
        BackendError: as ``call_with_retries``.
    """
    attempts = 0
    stop = _Stop(policy, times.timeout_s, times.deadline)
    token = stop_token()  # the request loop cancels the task when it stops; this refuses what comes after

    async def once() -> T:
        nonlocal attempts
        if token is not None:
            token.check(backend)
        attempts += 1
        try:
            return await fn(_attempt_timeout(times))
        except Exception as exc:
            if token is not None and token.stopped:
                raise CallsStopped(f"{backend}: the run was stopped during an attempt") from exc
            raise

    _check_started(backend, times.deadline)
    try:
        return await tenacity.AsyncRetrying(stop=stop, **_retry_kwargs(policy, backend, secrets))(once), attempts
    except Exception as exc:
        if not _is_call_failure(exc):
            raise  # a bug, not a failed call
        raise _given_up(exc, backend, stop, attempts, secrets) from exc


def _attempt_timeout(times: CallTimes) -> float:
    """The seconds the next attempt may take: ``timeout_s``, or less when the deadline is nearer."""
    left = times.timeout_s if times.deadline is None else times.deadline - time.monotonic()
    return max(0.001, min(times.timeout_s, left))


def _check_started(backend: str, deadline: float | None) -> None:
    if deadline is not None and deadline - time.monotonic() <= 0:
        raise BackendError(backend, "the call's deadline passed before its first attempt; no request was sent",
                           attempts=0, gave_up="deadline")


def _given_up(exc: Exception, backend: str, stop: _Stop, attempts: int, secrets: Iterable[str]) -> BackendError:
    """The ``BackendError`` of a call whose last attempt failed with ``exc``, saying why it stopped."""
    gave_up = stop.reason if is_retryable(exc) else "not_retryable"
    return to_backend_error(backend, exc, attempts, secrets, gave_up)
