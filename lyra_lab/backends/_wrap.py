"""``BackendWrapper``: the base of backends that add something around another backend's calls."""

from __future__ import annotations

from typing import Any, Sequence

from lyra_lab.backends._types import Backend, Capabilities, Completion, Message


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

    def complete(self, messages: Sequence[Message], **params: Any) -> Completion:
        return self.inner.complete(messages, **params)
