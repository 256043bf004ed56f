"""An ASGI app served by uvicorn on 127.0.0.1 in a background thread: the in-process servers' common base.

``backends.simulated.SimulatedServer``, ``systems.OpenAIEndpoint`` and
``systems.MemoryHttpServer`` are ``ThreadedServer``s: each says what it serves
(``_app``) and where its clients find it (``_started_on``, handed the port); the
base binds 127.0.0.1 (a free port unless one is given), runs uvicorn in a daemon
thread, returns from ``start`` once the server answers, and ``stop`` asks it to
exit and waits for the thread (at most 10 s).  ``with server:`` starts and
stops it, also when the block raises; a server that does not start is stopped
before the error is raised.

>>> from starlette.applications import Starlette
>>> class Empty(ThreadedServer):
...     def _app(self):
...         return Starlette()
...     def _started_on(self, port):
...         self.url = f"http://127.0.0.1:{port}"
>>> with Empty() as server:
...     server.url.startswith("http://127.0.0.1:")
True
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Self

from lyra_lab import _served

if TYPE_CHECKING:
    import uvicorn
    from starlette.types import ASGIApp


class ThreadedServer(ABC):
    """Serve ``_app()`` on 127.0.0.1 in a daemon thread from ``start`` until ``stop`` (and again after it).

    Args:
        port: the port to bind (0: a free one each start).
        keep_alive_s: seconds an idle keep-alive connection stays open (5: uvicorn's default).

    Attributes:
        thread_name: the serving thread's name; the port is appended (``simulated-server-41234``).
        start_failure: the error line when the server does not start, formatted with ``port`` and
            ``timeout_s``.
    """

    thread_name: ClassVar[str] = "threaded-server"
    start_failure: ClassVar[str] = "server on port {port} did not start within {timeout_s}s"
    #: a server that says what it serves (``_serves``) is known by that, not its port, while it runs
    #: (``lyra_lab._served``); None: known by its address
    served_kind: ClassVar[str | None] = None

    def __init__(self, *, port: int = 0, keep_alive_s: int = 5):
        self.port = port
        self.keep_alive_s = keep_alive_s
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._served_port: int | None = None

    def __enter__(self) -> Self:
        """Start serving (``start``)."""
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop serving (``stop``), also when the block raised."""
        self.stop()

    def start(self, timeout_s: float = 10.0) -> None:
        """Serve in a background thread; once the server answers, ``_started_on(port)`` says where.

        Raises:
            RuntimeError: ``start_failure``: the server did not start within ``timeout_s`` (it is stopped).
        """
        import uvicorn

        # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on sockets that
        # say they are TCP, and without it every response waits ~40 ms (Nagle).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        port = sock.getsockname()[1]
        config = uvicorn.Config(self._app(), http=self._http_protocol(), log_level="warning", access_log=False,
                                lifespan="off", timeout_graceful_shutdown=1, timeout_keep_alive=self.keep_alive_s)
        server = self._server = uvicorn.Server(config)
        thread = self._thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                                                 name=f"{self.thread_name}-{port}", daemon=True)
        thread.start()
        deadline = time.monotonic() + timeout_s
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                ThreadedServer.stop(self)  # the thread only: a subclass's stop does more (its sessions…)
                sock.close()
                raise RuntimeError(self.start_failure.format(port=port, timeout_s=timeout_s))
            time.sleep(0.01)
        self._started_on(port)
        if self.served_kind is not None:
            _served.register(port, self.served_kind, self._serves)
            self._served_port = port

    def stop(self) -> None:
        """Ask the server to exit and wait for its thread (at most 10 s); nothing when it is not serving."""
        _served.unregister(self._served_port)
        self._served_port = None
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = self._thread = None

    @abstractmethod
    def _app(self) -> ASGIApp:
        """The app to serve (built at each start)."""

    def _http_protocol(self) -> type[asyncio.Protocol] | str:
        """The ``http`` setting of uvicorn: a protocol class or a name (``"auto"``, uvicorn's default)."""
        return "auto"

    @abstractmethod
    def _started_on(self, port: int) -> None:
        """Say where the server answers (its URL), now that it does on ``port``."""

    def _serves(self) -> Mapping[str, Any]:
        """What the server serves, as plain values (asked only when ``served_kind`` is set)."""
        return {}
