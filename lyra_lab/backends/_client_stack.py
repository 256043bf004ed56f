"""HTTP clients for calls made from many threads, each client serving one call at a time.

A connection pool shared by every thread scans all its connections on every request and asks each
idle one whether its socket became readable (``httpcore2``'s pool, under ``httpx2``, under
``openai``): at 32 calls in flight, ~21 ``poll`` calls a request, each a release of the GIL that
another of the waiting threads takes. A client per call in flight holds one connection, so its
pool has only that one to look at: a summarizing grid at 32 in flight against a fast server sent
11–14% more requests a second, and recorded ~5–10 ms less of its own time in each request's latency
(``docs/performance.md``, "A fast server"). A call takes the client used last (its connection is the
warmest) or makes one; there are never more clients than calls ever in flight at once, which the
backend's concurrency slots bound. A forked child makes its own: its parent's clients hold the
parent's connections.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from typing import Callable, Generic, Iterator, Protocol, TypeVar


class Closable(Protocol):
    def close(self) -> None: ...


C = TypeVar("C", bound=Closable)


class ClientStack(Generic[C]):
    """Clients made by ``make`` on demand; ``client()`` lends one to a call, no two calls at once.

    ``close`` closes every client, those lent included (a call using one fails as with a closed
    client), and forgets them: the next call gets a new one.
    """

    def __init__(self, make: Callable[[], C]):
        self._make = make
        self._start_afresh()

    def _start_afresh(self) -> None:
        self._pid = os.getpid()
        self._lock = threading.Lock()  # a new one in a forked child: the parent's may have been held
        self._idle: list[C] = []  # clients not lent, the one given back last on top
        self._made: list[C] = []  # every client not closed, lent or not

    def __len__(self) -> int:
        """How many clients are open."""
        with self._lock:
            return len(self._made)

    @contextmanager
    def client(self) -> Iterator[C]:
        """A client for one call, given back when the call ends."""
        if self._pid != os.getpid():
            self._start_afresh()  # forked: the parent's clients are not this process's to use or close
        with self._lock:
            lent = self._idle.pop() if self._idle else None
        if lent is None:
            lent = self._make()
            with self._lock:
                self._made.append(lent)
        try:
            yield lent
        finally:
            with self._lock:
                if any(made is lent for made in self._made):  # not closed while it was lent
                    self._idle.append(lent)

    def close(self) -> None:
        """Close every client made so far; later calls make new ones."""
        with self._lock:
            made, self._made, self._idle = self._made, [], []
        for client in made:
            client.close()
