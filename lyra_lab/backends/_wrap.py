"""``BackendWrapper`` and ``EmbedderWrapper``: bases of what adds something around another one's calls.

Backends and embedders built on them add something (a cache, metering, progress) around the calls
of the one they wrap.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from lyra_lab.backends._types import Backend, Capabilities, Completion, Embedder, Message


class BackendWrapper:
    """A ``Backend`` that is ``inner`` as far as results can tell: same name, model and capabilities.

    Subclasses override ``complete`` to add something around the call (a seed,
    a retry sink…). Nothing of ``inner`` is read until asked, so wrapping a
    backend that builds itself on first use starts nothing.
    """

    def __init__(self, inner: Backend):
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    def complete(self, messages: Sequence[Message], *, deadline: float | None = None,
                 **params: object) -> Completion:
        return self.inner.complete(messages, deadline=deadline, **params)


class EmbedderWrapper:
    """An ``Embedder`` that is ``inner`` as far as vectors can tell: same name, dim and identity.

    Subclasses override ``embed`` to add something around the call (timing, a use flag…).
    """

    def __init__(self, inner: Embedder):
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def identity(self) -> Mapping[str, Any]:
        return self.inner.identity()

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        return self.inner.embed(texts, kind=kind)
