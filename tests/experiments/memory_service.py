"""An HTTP memory service for the tests of plan, consent and resume: examples/http_memory_service.py's memory,
counting every request, and failing on purpose where a test asks (``fail``: call -> HTTP status)."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Mapping

import importlib.util

from tests.systems.conftest import REPO

_spec = importlib.util.spec_from_file_location("http_memory_service", REPO / "examples" / "http_memory_service.py")
assert _spec is not None and _spec.loader is not None
EXAMPLE = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(EXAMPLE)


class CountingService:
    """The example service on ``host`` (a free port), counting requests by call; a context manager."""

    def __init__(self, host: str = "127.0.0.1", fail: Mapping[str, int] | None = None):
        self.requests: dict[str, int] = {}
        self.fail = dict(fail or {})
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                call = self.path.strip("/")
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    service.requests[call] = service.requests.get(call, 0) + 1
                if call in service.fail:
                    status, answer = service.fail[call], {"error": f"{call} refused on purpose"}
                else:
                    try:
                        status, answer = 200, EXAMPLE.handle(call, body)
                    except KeyError as exc:
                        status, answer = 404, {"error": f"unknown {exc}"}
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        lock = threading.Lock()
        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.url = f"http://{host}:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def total(self) -> int:
        return sum(self.requests.values())

    def __enter__(self) -> "CountingService":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def free_port() -> int:
    """A port of 127.0.0.1 where nothing listens (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def non_loopback_address() -> str | None:
    """An address of this machine other than loopback (None: it has none a server can bind)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))  # UDP: nothing is sent; picks the interface a route would use
            address = str(s.getsockname()[0])
        except OSError:
            return None
    if address.startswith("127.") or address == "0.0.0.0":
        return None
    try:
        with socket.socket() as probe:
            probe.bind((address, 0))
    except OSError:
        return None
    return address
