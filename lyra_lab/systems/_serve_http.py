"""Any memory system served over lyra-lab's memory protocol (HTTP, 127.0.0.1), for other harnesses.

``MemoryHttpServer(system, backend, embedder)`` opens one session of ``system``
per ``/open`` and answers ``/ingest``, ``/query``, ``/contents`` and ``/close`` from it
(``_protocol``).  Starlette on uvicorn in a background thread, bound to
127.0.0.1 on a free port unless one is given; the sessions run one call at a
time (a memory is owner-thread state).  A bad request is a 400 with one line,
an unknown session a 404, a failure of the served system a 502.

>>> from lyra_lab.systems import PipelineSystem
>>> with MemoryHttpServer(PipelineSystem()) as server:
...     server.url.startswith("http://127.0.0.1:")
True
"""

from __future__ import annotations

import itertools
import threading
from typing import TYPE_CHECKING, Awaitable, Callable, Mapping

from lyra_lab._threaded_server import ThreadedServer
from lyra_lab.backends import Backend, Embedder
from lyra_lab.systems._protocol import (CALLS, PROTOCOL, HitsJson, ProtocolError, ReportJson, check_protocol,
                                        hit_json, parse_when, report_json, turn_from_json)
from lyra_lab.systems._types import MemorySession, MemorySystem, MemorySystemError

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

#: a request's JSON object -> the answer's (one per protocol call)
Handler = Callable[[Mapping[str, object]], Mapping[str, object]]


class MemoryHttpServer(ThreadedServer):
    """Serve ``system`` at ``url`` (``/open``, ``/ingest``, ``/query``, ``/close``) until ``stop()``."""

    thread_name = "memory-http"
    start_failure = "memory server on port {port} did not start within {timeout_s}s"

    def __init__(self, system: MemorySystem, backend: Backend | None = None, embedder: Embedder | None = None,
                 *, port: int = 0):
        super().__init__(port=port)
        self.system = system
        self.backend = backend
        self.embedder = embedder
        self.url = ""
        self._sessions: dict[str, tuple[str, MemorySession]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._handlers: dict[str, Handler] = {"open": self._open, "ingest": self._ingest, "query": self._query,
                                              "contents": self._contents, "close": self._close}

    def stop(self) -> None:
        """Stop serving and close every open session (their processes too)."""
        super().stop()
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for _, session in sessions:
            try:
                session.close()
            except MemorySystemError:
                pass  # stopping anyway; the session's own close already stopped what it could

    def _app(self) -> Starlette:
        from starlette.applications import Starlette
        from starlette.routing import Route

        return Starlette(routes=[Route(f"/{call}", self._endpoint(call), methods=["POST"]) for call in CALLS])

    def _started_on(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}"

    # ------------------------------------------------------------------ calls
    def _endpoint(self, call: str) -> Callable[[Request], Awaitable[Response]]:
        import anyio.to_thread
        from starlette.responses import JSONResponse

        async def handle(request: Request) -> Response:
            try:
                body = await request.json()
            except ValueError:
                return JSONResponse({"error": "the body is not JSON"}, status_code=400)
            status, answer = await anyio.to_thread.run_sync(self._answer, call, body)
            return JSONResponse(answer, status_code=status)

        return handle

    def _answer(self, call: str, body: object) -> tuple[int, Mapping[str, object]]:
        """``(status, answer)`` of one call (in a worker thread; one call at a time)."""
        try:
            if not isinstance(body, dict):
                raise ProtocolError("request: expected a JSON object")
            check_protocol(body, "request")
            with self._lock:
                return 200, self._handlers[call](body)
        except ProtocolError as exc:
            return 400, {"error": str(exc)}
        except KeyError as exc:
            return 404, {"error": f"unknown session {exc.args[0]!r}"}
        except LookupError as exc:  # /contents of a system that cannot list its memory
            return 404, {"error": str(exc)}
        except MemorySystemError as exc:
            return 502, {"error": str(exc)}

    def _session(self, body: Mapping[str, object]) -> tuple[str, MemorySession]:
        session = body.get("session")
        if not isinstance(session, str):
            raise ProtocolError(f"request.session: expected a string, got {session!r}")
        return self._sessions[session]

    def _open(self, body: Mapping[str, object]) -> Mapping[str, object]:
        conversation_id = body.get("conversation_id") or "default"
        if not isinstance(conversation_id, str):
            raise ProtocolError(f"request.conversation_id: expected a string, got {conversation_id!r}")
        session_id = f"s{next(self._ids)}"
        self._sessions[session_id] = (conversation_id, self.system.open(conversation_id, self.backend, self.embedder))
        return {"protocol": PROTOCOL, "session": session_id}

    def _ingest(self, body: Mapping[str, object]) -> ReportJson:
        conversation_id, session = self._session(body)
        turns = body.get("turns")
        if not isinstance(turns, list):
            raise ProtocolError(f"request.turns: expected a list, got {type(turns).__name__}")
        parsed = [turn_from_json(t, conversation_id, f"request.turns[{i}]") for i, t in enumerate(turns)]
        return report_json(session.ingest(parsed, final=bool(body.get("final"))))

    def _query(self, body: Mapping[str, object]) -> HitsJson:
        _, session = self._session(body)
        query, k = body.get("query"), body.get("k", 10)
        if not isinstance(query, str):
            raise ProtocolError(f"request.query: expected a string, got {query!r}"[:300])
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ProtocolError(f"request.k: expected an integer >= 1, got {k!r}")
        hits = session.query(query, k, now=parse_when(body.get("now"), "request.now"))
        return {"hits": [hit_json(h) for h in hits]}

    def _contents(self, body: Mapping[str, object]) -> HitsJson:
        _, session = self._session(body)
        items = session.contents()
        if items is None:
            raise LookupError("the served system cannot list its memory")
        return {"hits": [hit_json(h) for h in items]}

    def _close(self, body: Mapping[str, object]) -> Mapping[str, object]:
        session_id = body.get("session")
        entry = self._sessions.pop(session_id, None) if isinstance(session_id, str) else None
        if entry is None:
            raise KeyError(session_id)
        entry[1].close()
        return {}
