"""``benchmarks/minimal_client.py``, the yardstick of ``benchmarks/fast_server.py``, on real sockets.

Against the simulated server (uvicorn, the server ``fast_server.py`` measures against): it reads
plain and chunked (streamed) answers as the server sent them, keeps one connection per slot
alive across requests, and counts failed requests with their errors instead of stopping.
"""

from __future__ import annotations

import asyncio
import importlib.util
import socket
import sys
from pathlib import Path

import pytest

from lyra_lab.backends import SimulatedServer
from lyra_lab.bench import GPU_LIKE

ROOT = Path(__file__).resolve().parents[2]
PATH = "/v1/chat/completions"
MESSAGES = [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Carol moved to Lyon in May. She took the night train. It was late."}]


@pytest.fixture(scope="module")
def mc():
    spec = importlib.util.spec_from_file_location("minimal_client", ROOT / "benchmarks" / "minimal_client.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["minimal_client"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("minimal_client", None)


@pytest.fixture(scope="module")
def server():
    with SimulatedServer(GPU_LIKE, latency_s=0.005) as running:
        yield running


@pytest.fixture(autouse=True)
def _fresh(server):
    server.reset()


def _url(server) -> str:
    return server.base_url + "/chat/completions"


def _connection(mc, server):
    host, port = server.base_url.removeprefix("http://").split("/")[0].split(":")
    return mc.Connection(host, int(port))


def test_a_plain_answer_is_the_json_the_server_sent(mc, server):
    async def go():
        connection = _connection(mc, server)
        try:
            answer = await mc.post_json(connection, PATH, {"model": "m", "messages": MESSAGES,
                                                                     "max_tokens": 5})
        finally:
            connection.close()
        return answer, connection.headers

    answer, headers = asyncio.run(go())
    assert int(headers["content-length"]) > 0 and "transfer-encoding" not in headers
    assert answer["object"] == "chat.completion"
    text = answer["choices"][0]["message"]["content"]
    assert text and set(text.split()) <= set(MESSAGES[1]["content"].split())  # extractive: the user's words
    assert answer["usage"]["completion_tokens"] == len(text.split()) <= 5
    (record,) = server.chat_log()
    assert record.status == 200 and record.max_tokens == 5


def test_a_streamed_answer_is_read_through_its_chunks_to_done(mc, server):
    body = {"model": "m", "messages": MESSAGES, "max_tokens": 6, "stream": True,
            "stream_options": {"include_usage": True}}

    async def go():
        connection = _connection(mc, server)
        try:
            events = await mc.post_json(connection, PATH, body)
            plain = await mc.post_json(connection, PATH, {**body, "stream": False})
        finally:
            connection.close()
        return events, plain, connection

    events, plain, connection = asyncio.run(go())
    assert connection.opened == 1  # the chunked answer was read to its end: the connection went on
    pieces = [e["choices"][0]["delta"].get("content") for e in events if e["choices"]]
    assert pieces[0] == ""  # the role chunk
    text = "".join(p for p in pieces if p)
    assert text == plain["choices"][0]["message"]["content"]  # the same reply, streamed and not
    assert events[-1]["choices"] == [] and events[-1]["usage"]["completion_tokens"] == len(text.split())
    assert events[-2]["choices"][0]["finish_reason"] in ("stop", "length")


def test_the_chunked_decoder_on_a_server_that_splits_the_stream_oddly(mc):
    # a server of our own writing a chunked answer in pieces that cut lines and events in two
    stream = (b'data: {"a": 1}\n\n', b'data: {"b"', b': 2}\n\ndata: [DO', b"NE]\n\n")
    chunked = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in stream) + b"0\r\nX-Trailer: t\r\n\r\n"

    async def handle(reader, writer):
        for _ in range(2):
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            await reader.readexactly(length)
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked[:7])
            await writer.drain()
            await asyncio.sleep(0.01)
            writer.write(chunked[7:])
            await writer.drain()
        writer.close()

    async def go():
        listener = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = listener.sockets[0].getsockname()[1]
        connection = mc.Connection("127.0.0.1", port)
        try:
            first = await mc.post_json(connection, "/x", {"stream": True})
            raw = await connection.post("/x", b"{}")
        finally:
            connection.close()
            listener.close()
        return first, raw, connection.opened

    first, raw, opened = asyncio.run(go())
    assert first == [{"a": 1}, {"b": 2}]
    assert raw == b"".join(stream) and opened == 1


def test_one_connection_per_slot_stays_alive_across_requests(mc, server):
    bodies = [{"model": "m", "messages": MESSAGES, "max_tokens": n} for n in (1, 2, 3)]
    seen = asyncio.run(mc.replay(_url(server), bodies, concurrency=4, n=24))
    assert seen.errors == [] and len(seen.latencies) == 24
    assert seen.opened == 4
    log = server.chat_log()
    assert len(log) == 24 and all(r.status == 200 for r in log)
    assert sorted(r.max_tokens for r in log) == sorted([1, 2, 3] * 8)  # the bodies in turn
    assert server.max_serving <= 4
    assert min(seen.latencies) >= 0.005  # at least the server's time to first token


def test_failed_requests_are_counted_with_their_error_and_the_run_goes_on(mc, server):
    server.enqueue("503", "ok", "malformed", "ok")
    body = {"model": "m", "messages": MESSAGES, "max_tokens": 3}
    seen = asyncio.run(mc.replay(_url(server), [body], concurrency=1, n=4))
    assert len(seen.latencies) == 2
    assert len(seen.errors) == 2
    assert seen.errors[0].startswith("StatusError: HTTP 503: ") and "simulated 503 fault" in seen.errors[0]
    assert seen.errors[1].startswith("JSONDecodeError")
    assert seen.opened == 2  # a status error keeps the connection, a half-read answer does not


def test_a_cut_stream_is_an_error_not_an_answer(mc, server):
    server.enqueue("cut", "ok")
    body = {"model": "m", "messages": MESSAGES, "max_tokens": 6, "stream": True}
    seen = asyncio.run(mc.replay(_url(server), [body], concurrency=1, n=2))
    assert len(seen.latencies) == 1
    (error,) = seen.errors
    assert error.startswith("ProtocolError: the stream ended without data: [DONE]")


def test_no_server_is_one_clear_error(mc):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nobody listens once it is closed
    with pytest.raises(ConnectionError, match=f"minimal client: cannot connect to 127.0.0.1:{port}"):
        asyncio.run(mc.replay(f"http://127.0.0.1:{port}/v1/chat/completions", [{}], concurrency=2, n=2))
    with pytest.raises(ValueError, match="plain http://"):
        asyncio.run(mc.replay("https://example.org/v1", [{}], concurrency=1, n=1))


def test_a_head_that_is_not_http_is_refused(mc):
    with pytest.raises(mc.ProtocolError, match="not an HTTP/1.x status line"):
        mc.parse_head(b"SSH-2.0-OpenSSH\r\n\r\n")
    assert mc.parse_head(b"HTTP/1.1 404 Not Found\r\nX-A:  b \r\n\r\n") == (404, {"x-a": "b"})
