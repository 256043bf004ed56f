"""A server run in the command's foreground until Ctrl-C or SIGTERM (``serve-local``, ``serve-memory``)."""

from __future__ import annotations

import signal
import sys
import threading
from typing import Callable, Protocol


class Stoppable(Protocol):
    """A server the command starts and must stop (``backends.LocalServer``, ``systems.MemoryHttpServer``)."""

    def start(self) -> object:
        """Start serving."""
        ...

    def stop(self) -> None:
        """Stop serving."""
        ...


def serve_until_stopped(server: Stoppable, announce: Callable[[], None],
                        failure: Callable[[], str | None] = lambda: None) -> int:
    """Start ``server``, ``announce`` it, and serve until Ctrl-C or SIGTERM; the exit code.

    The server is stopped on the way out whatever ends the wait (a signal, Ctrl-C, a failure,
    an exception), and the previous SIGTERM handler is put back.

    Args:
        server: the server.
        announce: prints where it serves (called once it has started).
        failure: checked every 0.5 s: what went wrong with the server, None while it serves.

    Returns:
        0 once stopped ("stopped" printed); 1 after a failure (``error: <failure>`` on stderr).
    """
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        server.start()
        announce()
        while not stop.wait(0.5):
            problem = failure()
            if problem is not None:
                print(f"error: {problem}", file=sys.stderr)
                return 1
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        signal.signal(signal.SIGTERM, previous)
    print("stopped", flush=True)
    return 0
