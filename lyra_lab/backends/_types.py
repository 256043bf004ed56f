"""What every backend call returns: a completion with its usage, latency and cost.

Cost is data: ``Usage`` adds up with ``+`` so a phase, a probe or a whole run
can total its calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

Message = Mapping[str, str]


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


@runtime_checkable
class Backend(Protocol):
    """An LLM that completes chat messages. ``name`` and ``model`` identify it in results."""

    name: str
    model: str

    def complete(self, messages: Sequence[Message], **params: Any) -> Completion: ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-norm row vectors.

    ``kind`` is ``"passage"`` for memory entries and ``"query"`` for questions;
    embedders that make no such split ignore it.
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray: ...
