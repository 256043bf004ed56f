"""The simulated server's clock starts when a request arrives, and its answer is ready by its deadline (issue 43).

An answer is due ``latency_s + n / tokens_per_s`` after its request was received. Counted from
the moment the route's handler ran, that left out the server's own parsing and routing; counted
from the answer's deadline, rendering the JSON body was added after it. These tests pin the
clock's start (the request's first bytes, stamped by the server's HTTP protocol), the rendering
before the deadline, the deadline arithmetic itself, and that the response's bytes and the
socket's TCP_NODELAY are what they were.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
import types

import httpx
import pytest
import uvicorn
from starlette.responses import JSONResponse
from uvicorn.server import ServerState

from lyra_lab.backends import SimulatedServer
from lyra_lab.backends.simulated import _arrival
from lyra_lab.backends.simulated._arrival import ARRIVED, ArrivalStampedH11, arrived_at
from lyra_lab.backends.simulated._serving import Pace

BODY = {"model": "simulated", "max_tokens": 8, "messages": [{"role": "user", "content": "One. Two. Three."}]}


class FakeTransport(asyncio.Transport):
    """A fake transport for the protocol unit test: keeps what is written."""

    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()

    def get_extra_info(self, name, default=None):
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}.get(name, default)

    def write(self, data) -> None:
        self.written += data

    def is_closing(self) -> bool:
        return False

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def test_the_protocol_stamps_each_request_with_when_its_first_bytes_arrived(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(_arrival, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))

    async def app(scope, receive, send):  # answers at once, so a second request can follow on the connection
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    loop = asyncio.new_event_loop()
    try:
        config = uvicorn.Config(app, http=ArrivalStampedH11, lifespan="off")
        config.load()
        protocol = ArrivalStampedH11(config, ServerState(), {}, _loop=loop)
        protocol.connection_made(FakeTransport())
        head = b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n"
        protocol.data_received(head[:20])  # the head arrives in two pieces, 5 ms apart
        clock[0] = 100.005
        protocol.data_received(head[20:])
        first = protocol.cycle
        assert arrived_at(first.scope) == 100.0  # its first bytes, not the piece that completed the head
        clock[0] = 100.010
        protocol.data_received(b"{}")  # the body: same request, its stamp kept
        assert arrived_at(first.scope) == 100.0
        loop.run_until_complete(asyncio.gather(*protocol.tasks))
        assert first.response_complete
        clock[0] = 100.5
        protocol.data_received(head + b"{}")  # the next request on the connection: a stamp of its own
        assert protocol.cycle is not first
        assert arrived_at(protocol.cycle.scope) == 100.5
        loop.run_until_complete(asyncio.gather(*protocol.tasks))
    finally:
        loop.close()
    assert arrived_at({"state": {}}) is None and arrived_at({}) is None
    assert ARRIVED == "arrived_at"


def test_a_request_is_received_when_it_arrived_not_when_its_handler_logs_it():
    with SimulatedServer(latency_s=0.0) as server:
        serving = server._serving
        logged_at: list[float] = []
        record = serving.record

        def spying_record(path, has_auth, received=None):
            logged_at.append(time.monotonic())
            return record(path, has_auth, received)

        serving.record = spying_record
        with httpx.Client(timeout=10) as client:
            for _ in range(3):
                assert client.post(server.base_url + "/chat/completions", json=BODY).status_code == 200
        chats = server.chat_log()
    assert len(chats) == 3 == len(logged_at)
    for rec, logged in zip(chats, logged_at):
        assert rec.received < logged  # the parsing and routing before the handler are inside its time
        assert logged - rec.received < 1.0


def test_a_whole_answer_is_rendered_before_its_deadline_and_sent_at_it(monkeypatch):
    rendered: list[float] = []
    render = JSONResponse.render

    def timed_render(self, content):
        rendered.append(time.monotonic())
        return render(self, content)

    monkeypatch.setattr(JSONResponse, "render", timed_render)
    with SimulatedServer(latency_s=0.2, tokens_per_s=None) as server, httpx.Client(timeout=10) as client:
        response = client.post(server.base_url + "/chat/completions", json=BODY)
        (rec,) = server.chat_log()
    assert response.status_code == 200
    due = rec.received + 0.2
    assert rendered and rendered[-1] < due - 0.1  # rendered at once, not after the 200 ms wait
    assert rec.finished >= due  # and answered no earlier than its deadline


def test_the_response_bytes_are_the_compact_json_of_a_chat_completion():
    with SimulatedServer(latency_s=0.0) as server, httpx.Client(timeout=10) as client:
        started = int(time.time())
        response = client.post(server.base_url + "/chat/completions", json=BODY)
    body = json.loads(response.content)
    assert response.headers["content-type"] == "application/json"
    assert response.content == json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    assert list(body) == ["id", "object", "created", "model", "system_fingerprint", "choices", "usage"]
    assert body["object"] == "chat.completion" and started - 1 <= body["created"] <= time.time()
    assert body["choices"][0]["message"]["role"] == "assistant"
    assert body["usage"]["completion_tokens"] == len(body["choices"][0]["message"]["content"].split())


def test_the_servers_connections_send_without_nagle(monkeypatch):
    nodelay: list[int] = []
    made = ArrivalStampedH11.connection_made

    def spying_connection_made(self, transport):
        nodelay.append(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        made(self, transport)

    monkeypatch.setattr(ArrivalStampedH11, "connection_made", spying_connection_made)
    with SimulatedServer(latency_s=0.0) as server, httpx.Client(timeout=10) as client:
        assert client.get(server.base_url + "/models").status_code == 200
    assert nodelay and all(nodelay)


@pytest.mark.parametrize(("first_s", "rate", "n", "due"), [
    (0.02, 2000.0, 0, 10.02), (0.02, 2000.0, 64, 10.052), (0.1, 400.0, 400, 11.1), (0.05, None, 300, 10.05),
])
def test_pace_puts_token_n_at_first_token_plus_n_over_the_rate(first_s, rate, n, due):
    assert Pace(10.0, first_s, rate).due(n) == pytest.approx(due, abs=1e-9)


@pytest.mark.parametrize("exact", [False, True], ids=["timer", "exact"])
def test_pace_never_ends_a_wait_before_its_deadline(exact):
    async def waits() -> list[float]:
        late = []
        for i in range(5):
            pace = Pace(time.monotonic(), 0.01 + i * 0.003, 1000.0)
            await pace.until(3, exact=exact)
            late.append(time.monotonic() - pace.due(3))
        return late

    late = asyncio.run(waits())
    assert min(late) >= 0
