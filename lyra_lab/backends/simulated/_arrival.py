"""When a request reached the simulated server: its head's arrival, stamped before the framework's work.

The simulated server's answers are due ``latency_s + n / tokens_per_s`` after a request was
received (``Pace``). Counted from the moment the route's handler runs, that clock left out what the
server did first: uvicorn parsing the head, creating the request's task, the loop getting to it,
Starlette's middleware and routing (0.35-0.5 ms a request on busy shared cores), all added to
every answer beyond its spec. ``ArrivalStampedH11`` is uvicorn's h11 protocol (given to uvicorn as
its ``http`` protocol class, a documented setting) that notes when the first bytes of each request
arrived and puts that instant in the request's ASGI scope state (``arrived_at``), where the
handler reads it: the clock of an answer starts when its request reached the server, as a real
server's time to first token does.
"""

from __future__ import annotations

import time
from typing import Any, Mapping

from uvicorn.protocols.http.h11_impl import H11Protocol

#: The key of the scope state under which a request's arrival (``time.monotonic()``) is kept.
ARRIVED = "arrived_at"


def arrived_at(scope: Mapping[str, Any]) -> float | None:
    """When the request of ``scope`` reached the server (``time.monotonic()``), if a stamping protocol served it."""
    value = (scope.get("state") or {}).get(ARRIVED)
    return float(value) if value is not None else None


class ArrivalStampedH11(H11Protocol):
    """uvicorn's h11 protocol, stamping each request's scope state with when its first bytes arrived."""

    _head_at: float | None = None  # when the bytes of a request not yet parsed began to arrive

    def data_received(self, data: bytes) -> None:
        """Note the time when these bytes begin a request, then parse them as uvicorn does."""
        before = self.cycle
        if self._head_at is None and (before is None or before.response_complete):
            self._head_at = time.monotonic()
        super().data_received(data)
        if self.cycle is not before and self._head_at is not None:  # a request's head was parsed
            self.cycle.scope["state"][ARRIVED] = self._head_at
            self._head_at = None
