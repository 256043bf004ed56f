"""Fakes for fast offline tests and fault injection. Named as fakes; never a feature.

``FakeLLM`` answers from a queue of outputs or a function of the messages, and
can be told to fail.  ``HashingEmbedder`` maps texts to deterministic unit
vectors by hashing their word n-grams (a bag-of-words signal, so similar texts
do land near each other).
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from lyra_lab.backends._prices import Price
from lyra_lab.backends.simulated import hashed_vectors
from lyra_lab.backends._types import BackendError, Capabilities, Completion, Message, Usage

_WORD = re.compile(r"\w+", re.UNICODE)


class FakeLLM:
    """A queued-output fake backend.

    Args:
        outputs: texts returned in order; when exhausted, ``respond`` is used.
        respond: a function of the messages giving the reply (default: the
            first 12 words of the last message, so summaries hold real words).
        fail: a function of the messages; when it returns true the call raises
            ``BackendError`` (for fault drills): HTTP 500 after one attempt, its
            retries spent (``gave_up == "attempts"``).

    Its capabilities: simulated, in process, free (a known price of 0), word
    counts as usage, no streaming.
    """

    def __init__(
        self,
        outputs: Iterable[str] = (),
        respond: Callable[[Sequence[Message]], str] | None = None,
        fail: Callable[[Sequence[Message]], bool] | None = None,
        name: str = "fake",
        model: str = "fake-llm",
    ):
        self.name = name
        self.model = model
        self.capabilities = Capabilities.in_process(name, model, simulated=True, price=Price(model, 0.0, 0.0))
        self._queue: deque[str] = deque(outputs)
        self._respond = respond or _echo_words
        self._fail = fail
        self._lock = threading.Lock()
        self.calls: list[list[dict[str, str]]] = []

    def enqueue(self, *outputs: str) -> None:
        with self._lock:
            self._queue.extend(outputs)

    def complete(self, messages: Sequence[Message], *, deadline: float | None = None,
                 **params: object) -> Completion:
        """The next queued output (else ``respond``); a ``deadline`` already past fails the call unanswered."""
        msgs = [dict(m) for m in messages]
        if deadline is not None and time.monotonic() >= deadline:
            raise BackendError(self.name, "the call's deadline passed before it started (FakeLLM)", attempts=0,
                               gave_up="deadline")
        with self._lock:
            self.calls.append(msgs)
            if self._fail is not None and self._fail(msgs):
                raise BackendError(self.name, "injected failure (FakeLLM)", status=500, gave_up="attempts")
            text = self._queue.popleft() if self._queue else self._respond(msgs)
        prompt_tokens = sum(len(_WORD.findall(m.get("content", ""))) for m in msgs)
        usage = Usage(prompt_tokens=prompt_tokens, completion_tokens=len(_WORD.findall(text)), calls=1)
        return Completion(text=text, usage=usage, latency_s=0.0, backend=self.name, model=self.model,
                          simulated=True, finish_reason="stop")


def _echo_words(messages: Sequence[Message]) -> str:
    words = _WORD.findall(messages[-1].get("content", "")) if messages else []
    return " ".join(words[:12])


class HashingEmbedder:
    """Deterministic, dependency-free embeddings from hashed word uni- and bigrams."""

    def __init__(self, dim: int = 256, name: str = "hashing"):
        if dim <= 0:
            raise ValueError("dim must be positive")
        self.dim = dim
        self.name = f"{name}-{dim}"

    def identity(self) -> dict[str, Any]:
        """What determines the vectors: the dimension and the class (a subclass may embed otherwise), not the label."""
        return {"embedder": "hashing", "dim": self.dim, "class": type(self).__qualname__}

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        return hashed_vectors(texts, self.dim)
