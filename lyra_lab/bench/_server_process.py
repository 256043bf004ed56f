"""A simulated server in its own process, as a real server is not in the client's interpreter.

A ``SimulatedServer`` in the client's process shares its GIL: the client's
work delays the server's answers and the server's work the client's timing,
so neither the client's overhead nor its latencies can be measured there.
``ServerProcess`` runs one in a child process (spawned) and asks it over a pipe
for its request log's timings::

    with ServerProcess(GPU_LIKE) as server:
        ...  # requests to server.base_url
        served = server.service_times()  # each finished chat request's time inside the server

``ServerProcess(spec, keep_bodies=True)`` also keeps each chat request's body, so another client
can replay exactly the requests one client sent (``bodies()``).
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnProcess
from typing import Any, NamedTuple, Self

from lyra_lab.backends import SimulatedServer, SimulatedSpec


class Served(NamedTuple):
    """One chat request as the server saw it (``time.monotonic()`` of the server's process)."""

    received: float
    finished: float
    status: int

    @property
    def service_s(self) -> float:
        """Received to answered, the server's own time for the request."""
        return self.finished - self.received


def _serve(conn: Connection, spec: SimulatedSpec, keep_bodies: bool) -> None:
    """The child process: serve ``spec`` and answer ``reset`` / ``served`` / ``bodies`` on ``conn`` until ``stop``."""
    with SimulatedServer(spec) as server:
        server.keep_bodies = keep_bodies
        conn.send(server.base_url)
        while (command := conn.recv()) != "stop":
            if command == "reset":
                server.reset()
                conn.send(None)
                continue
            finished = [(r, r.finished) for r in server.chat_log() if r.finished is not None]
            if command == "bodies":
                conn.send([r.body for r, _ in finished if r.status == 200])
            else:
                conn.send([Served(r.received, end, r.status) for r, end in finished])


class ServerProcess:
    """A ``SimulatedServer`` with ``spec`` in a spawned child process; ``with`` starts and stops it.

    Attributes:
        base_url: where it answers (ends in ``/v1``), once started.
    """

    def __init__(self, spec: SimulatedSpec, keep_bodies: bool = False):
        self.spec = spec
        self.keep_bodies = keep_bodies
        self.base_url = ""
        self._conn: Any = None
        self._process: SpawnProcess | None = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, timeout_s: float = 60.0) -> None:
        """Spawn the child and wait until it serves.

        Raises:
            RuntimeError: it did not say where it serves within ``timeout_s``.
        """
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child, self.spec, self.keep_bodies), daemon=True,
                                        name="simulated-server-process")
        self._process.start()
        if not self._conn.poll(timeout_s):
            self.stop()
            raise RuntimeError(f"simulated server process did not start within {timeout_s}s")
        self.base_url = self._conn.recv()

    def reset(self) -> None:
        """Forget the request log (and counters) of the server."""
        self._conn.send("reset")
        self._conn.recv()

    def served(self) -> list[Served]:
        """Every finished chat request so far, in arrival order."""
        self._conn.send("served")
        return list(self._conn.recv())

    def bodies(self) -> list[dict[str, Any]]:
        """The JSON body of each finished, answered chat request, in arrival order.

        Raises:
            ValueError: the server was started without ``keep_bodies``.
        """
        if not self.keep_bodies:
            raise ValueError("this ServerProcess keeps no request bodies: start it with keep_bodies=True")
        self._conn.send("bodies")
        return list(self._conn.recv())

    def service_times(self) -> list[float]:
        """Each finished, answered (HTTP 200) chat request's time inside the server, in arrival order."""
        return [s.service_s for s in self.served() if s.status == 200]

    def stop(self) -> None:
        """Stop the server and wait for the child (at most 30 s); nothing when it is not running."""
        if self._process is None:
            return
        try:
            if self._process.is_alive():
                self._conn.send("stop")
            self._process.join(timeout=30)
        finally:
            if self._process.is_alive():
                self._process.terminate()
            self._process = None
