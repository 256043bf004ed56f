"""A minimal HTTP/1.1 client on raw asyncio streams: the yardstick of ``fast_server.py`` (issue 45 item 5).

``fast_server.py`` compares lyra-lab with a client that does nothing but send the same requests:
what the cores allow. Its first such client, an asyncio loop over ``httpx.AsyncClient``, was not
minimal: httpx's connection pool asks every idle connection whether its socket became readable
on every request (a ``poll`` each), and anyio asks each new stream for its peer's address, which
measured 3.5-3.8 ms of CPU a request at 32 in flight on loaded cores, against 0.13-0.15 ms with
raw asyncio streams (docs/performance.md, "A fast server"). This one:

- one keep-alive connection per request in flight (``asyncio.open_connection``), opened before
  the clock starts, so no warm-up request is needed;
- each request one ``write`` of its head and its ``Content-Length`` body (the JSON encoded by
  orjson for each request, as any client must);
- a response read by its ``Content-Length``, by its chunked encoding when the server uses one (a
  streamed answer), or to the end of the connection when it gives neither; a streamed answer's
  server-sent events parsed as they arrive, each ``data:`` line with orjson;
- no retries: a failed request (a status other than 200, a broken connection, a body that is not
  JSON, a stream without ``[DONE]``) is counted with its error, the connection reopened when it
  may be broken, and the slot goes on with the next request.

>>> parse_head(b"HTTP/1.1 200 OK\\r\\ncontent-length: 2\\r\\n\\r\\n")
(200, {'content-length': '2'})
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import urlsplit

import orjson

DONE = b"[DONE]"


class ProtocolError(Exception):
    """A response this client cannot read as HTTP/1.1 (or a stream that ended before ``[DONE]``)."""


class StatusError(Exception):
    """A complete response whose status is not 200; the connection stays usable."""

    def __init__(self, status: int, body: bytes):
        super().__init__(f"HTTP {status}: {body[:200].decode('utf-8', 'replace')}")
        self.status = status


def parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    """The status and the headers (names lower-cased) of a response head ending in a blank line.

    Raises:
        ProtocolError: not an HTTP/1.x status line, or a header line without a colon.
    """
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise ProtocolError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, colon, value = line.partition(":")
        if not colon:
            raise ProtocolError(f"a header line without a colon: {line[:80]!r}")
        headers[name.strip().lower()] = value.strip()
    return int(parts[1]), headers


class Connection:
    """One keep-alive HTTP/1.1 connection to ``host:port``, one request at a time.

    Attributes:
        opened: how many times a socket was opened (1 while the server keeps the connection alive).
        headers: the last response's headers (names lower-cased).
    """

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.opened = 0
        self.headers: dict[str, str] = {}
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Open the socket, unless it is open; its reader and writer."""
        if self._reader is None or self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
            self.opened += 1
        return self._reader, self._writer

    def close(self) -> None:
        """Close the socket (the next request opens a new one)."""
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None

    async def post(self, path: str, body: bytes, on_data: Callable[[bytes], None] | None = None) -> bytes:
        """POST ``body`` (JSON) to ``path``; the response's body, or ``b""`` when ``on_data`` took it.

        ``on_data`` is handed each piece of a chunked body as it arrives (a streamed answer).

        Raises:
            StatusError: the response's status is not 200 (its body read: the connection is usable).
            ProtocolError, OSError, asyncio.IncompleteReadError: the connection is broken (closed here).
        """
        reader, writer = await self.open()
        try:
            writer.write(b"POST %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (path.encode(), self.host.encode(), self.port,
                                                            len(body), body))
            status, headers = parse_head(await reader.readuntil(b"\r\n\r\n"))
            self.headers = headers
            payload = await self._body(reader, headers, on_data if status == 200 else None)
        except BaseException:
            self.close()
            raise
        if headers.get("connection", "").lower() == "close":
            self.close()
        if status != 200:
            raise StatusError(status, payload)
        return payload

    async def _body(self, reader: asyncio.StreamReader, headers: dict[str, str],
                    on_data: Callable[[bytes], None] | None) -> bytes:
        if "content-length" in headers:
            payload = await reader.readexactly(int(headers["content-length"]))
            if on_data is None:
                return payload
            on_data(payload)
            return b""
        if headers.get("transfer-encoding", "").lower() == "chunked":
            pieces: list[bytes] = []
            while True:
                size_line = await reader.readuntil(b"\r\n")
                try:
                    size = int(size_line.split(b";", 1)[0], 16)
                except ValueError:
                    raise ProtocolError(f"a bad chunk size line: {size_line[:40]!r}") from None
                if size == 0:
                    while await reader.readuntil(b"\r\n") != b"\r\n":
                        pass  # trailers
                    break
                piece = (await reader.readexactly(size + 2))[:-2]
                if on_data is None:
                    pieces.append(piece)
                else:
                    on_data(piece)
            return b"".join(pieces)
        payload = await reader.read()  # neither: the body ends with the connection
        self.close()
        if on_data is None:
            return payload
        on_data(payload)
        return b""


class EventStream:
    """Server-sent events fed in pieces (``feed``): each ``data:`` line parsed with orjson as it completes."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.done = False
        self._rest = b""

    def feed(self, piece: bytes) -> None:
        """Take the next piece of the stream.

        Raises:
            orjson.JSONDecodeError: a ``data:`` line that is not JSON.
        """
        lines = (self._rest + piece).split(b"\n")
        self._rest = lines.pop()
        for line in lines:
            if line.startswith(b"data: "):
                data = line[6:].rstrip(b"\r")
                if data == DONE:
                    self.done = True
                else:
                    self.events.append(orjson.loads(data))


async def post_json(connection: Connection, path: str, body: dict[str, Any]) -> Any:
    """POST ``body`` on ``connection``; the parsed answer: a JSON value, or a streamed answer's events.

    A body with ``"stream": true`` is read as server-sent events: the list of its ``data:`` events.

    Raises:
        ProtocolError: a stream that ended without ``data: [DONE]``; and what ``Connection.post`` raises.
        orjson.JSONDecodeError: an answer (or an event) that is not JSON.
    """
    data = orjson.dumps(body)
    if not body.get("stream"):
        return orjson.loads(await connection.post(path, data))
    stream = EventStream()
    await connection.post(path, data, stream.feed)
    if not stream.done:
        raise ProtocolError(f"the stream ended without data: [DONE] after {len(stream.events)} events")
    return stream.events


@dataclass
class Replay:
    """What ``replay`` saw.

    Attributes:
        latencies: seconds from sending to the answer read and parsed, of each answered request.
        errors: the error of each request that failed (``"StatusError: HTTP 503: ..."``), in order.
        opened: sockets opened (the concurrency, when the server kept every connection alive).
    """

    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    opened: int = 0


BROKEN = (ProtocolError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError)


async def replay(url: str, bodies: list[dict[str, Any]], concurrency: int, n: int,
                 timeout_s: float = 60.0) -> Replay:
    """Send ``n`` requests, ``bodies`` in turn, to ``url`` (``http://host:port/path``), ``concurrency`` at once.

    Each of ``concurrency`` slots has its own keep-alive connection, opened before any request
    is sent, and takes the next body when its answer is in.

    Raises:
        ValueError: ``url`` is not ``http://`` with a host, or ``bodies`` is empty.
        ConnectionError: the connections could not be opened (no request was sent).
    """
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"the minimal client speaks plain http://host:port/path, not {url!r}")
    if not bodies:
        raise ValueError("no request bodies to send")
    path = parts.path or "/"
    connections = [Connection(parts.hostname, parts.port or 80) for _ in range(min(concurrency, n))]
    try:
        await asyncio.gather(*(c.open() for c in connections))
    except OSError as exc:
        for c in connections:
            c.close()
        raise ConnectionError(f"minimal client: cannot connect to {parts.netloc}: {exc}") from None
    seen = Replay()
    issued = 0

    async def slot(connection: Connection) -> None:
        nonlocal issued
        while issued < n:
            i, issued = issued, issued + 1
            start = time.perf_counter()
            try:
                async with asyncio.timeout(timeout_s):
                    await post_json(connection, path, bodies[i % len(bodies)])
            except (StatusError, orjson.JSONDecodeError, *BROKEN) as exc:
                if not isinstance(exc, StatusError):
                    connection.close()  # a half-read answer leaves the connection unusable
                seen.errors.append(f"{type(exc).__name__}: {exc}")
                continue
            seen.latencies.append(time.perf_counter() - start)

    try:
        await asyncio.gather(*(slot(c) for c in connections))
    finally:
        for c in connections:
            c.close()
    seen.opened = sum(c.opened for c in connections)
    return seen
