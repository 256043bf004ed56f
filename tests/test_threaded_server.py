"""``ThreadedServer``: serves on 127.0.0.1 until stopped, and a server that does not start is stopped with its line."""

from __future__ import annotations

import threading

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from lyra_lab._threaded_server import ThreadedServer


class HelloServer(ThreadedServer):
    """A fake server for these tests: one route answering "hello"."""

    thread_name = "hello-test"
    start_failure = "hello server on port {port} did not start within {timeout_s}s"

    def __init__(self) -> None:
        super().__init__()
        self.url = ""
        self.ports: list[int] = []

    def _app(self) -> Starlette:
        return Starlette(routes=[Route("/", lambda request: PlainTextResponse("hello"))])

    def _started_on(self, port: int) -> None:
        self.ports.append(port)
        self.url = f"http://127.0.0.1:{port}"


def _serving_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("hello-test-")]


def test_it_serves_on_loopback_until_the_block_ends_and_again_after_a_restart():
    with HelloServer() as server:
        assert server.url.startswith("http://127.0.0.1:")
        assert httpx.get(server.url, timeout=5).text == "hello"
        assert [t.name for t in _serving_threads()] == [f"hello-test-{server.ports[0]}"]
    assert not _serving_threads()
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url, timeout=2)
    server.start()  # a stopped server starts again (on a free port)
    try:
        assert httpx.get(server.url, timeout=5).text == "hello" and len(server.ports) == 2
    finally:
        server.stop()
    assert not _serving_threads()


def test_a_server_that_does_not_start_in_time_is_stopped_and_says_so_in_its_line(monkeypatch):
    import time

    import uvicorn

    def never_starts(self, sockets=None):  # a server stuck before it answers, until it is told to exit
        while not self.should_exit:
            time.sleep(0.01)

    monkeypatch.setattr(uvicorn.Server, "run", never_starts)
    server = HelloServer()
    with pytest.raises(RuntimeError, match=r"^hello server on port \d+ did not start within 0.3s$"):
        server.start(timeout_s=0.3)
    assert not _serving_threads() and server.url == "" and server.ports == []
