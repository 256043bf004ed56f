"""Calling an ``OpenAIBackend`` from a thread (``complete``) or from an event loop (``acomplete``).

Tests of a promise both paths keep take the ``call`` fixture, so each runs once per path.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import pytest

from lyra_lab.backends import Completion, OpenAIBackend


def complete_on_loop(backend: OpenAIBackend, messages: list[dict[str, Any]], **params: Any) -> Completion:
    """``backend.acomplete`` on a loop of its own, its connections closed before the loop ends."""
    async def once() -> Completion:
        try:
            return await backend.acomplete(messages, **params)
        finally:
            await backend.aclose()

    return asyncio.run(once())


@pytest.fixture(params=["thread", "event loop"])
def call(request) -> Callable[..., Completion]:
    """``call(backend, messages, **params)``: ``complete`` or ``acomplete``, one test run each."""
    if request.param == "thread":
        return lambda backend, messages, **params: backend.complete(messages, **params)
    return complete_on_loop
