"""A simulated OpenAI-compatible server on 127.0.0.1, for cloud-like load without a network.

Starlette on uvicorn in a background thread (asyncio serves many concurrent
and streaming requests on one thread). It models latency, generation speed,
a concurrency limit with queueing, rate limits (429 + ``Retry-After``) and
faults (5xx, hangs, malformed JSON, cut streams), and keeps a request log
that tests read. Replies are extractive (real sentences of the last user
message), so a "summary" holds real words. Everything produced through it is
labelled simulated (``make_backend({"preset": "simulated", ...})``).

>>> with SimulatedServer(latency_s=0.0) as server:
...     server.base_url.startswith("http://127.0.0.1:")
True
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from typing import TYPE_CHECKING, Any

from lyra_lab._threaded_server import ThreadedServer
from lyra_lab.backends.simulated._behaviour import (ERROR_STATUSES, SIMULATED_FINGERPRINT, FaultRule, SimulatedSpec,
                                                    error_body, messages_text)
from lyra_lab.backends.simulated._embeddings import EmbeddingsRoute
from lyra_lab.backends.simulated._serving import RequestRecord, Serving
from lyra_lab.backends.simulated._sse import stream_response

if TYPE_CHECKING:
    import asyncio

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response


class SimulatedServer(ThreadedServer):
    """Start with ``with SimulatedServer(spec_or_fields) as server:``; ``server.base_url`` ends in ``/v1``."""

    thread_name = "simulated-server"
    served_kind = "simulated"  # known by its spec, not its port (a notebook's resumed run keeps its cells)
    start_failure = "simulated server on port {port} did not start within {timeout_s}s"

    def __init__(self, spec: SimulatedSpec | None = None, **fields: Any):  # SimulatedSpec fields
        super().__init__(keep_alive_s=30)
        self.spec = dataclasses.replace(spec or SimulatedSpec(), **fields)
        self._serving = Serving(self.spec)
        self.behaviour = self._serving.behaviour  # the fault script and seeded draws (tests script it)
        self._embeddings_route = EmbeddingsRoute(self.spec)
        self.base_url = ""
        #: keep each chat request's whole JSON body in its record (``RequestRecord.body``), to replay a
        #: client's exact requests (``benchmarks/fast_server.py``); not part of what it serves
        self.keep_bodies = False

    # ------------------------------------------------------------ lifecycle
    def stop(self) -> None:
        """Stop serving (hanging requests are released first)."""
        self._serving.stopping.set()
        super().stop()

    def _started_on(self, port: int) -> None:
        self.base_url = f"http://127.0.0.1:{port}/v1"

    def _serves(self) -> dict[str, Any]:
        """Its spec: what its answers, latencies and faults follow (scripts added by tests aside)."""
        return dataclasses.asdict(self.spec)

    # ------------------------------------------------------------ test API
    def enqueue(self, *outcomes: str) -> None:
        """Script the next requests' outcomes, consumed in arrival order ("ok", "529", "hang"…)."""
        self.behaviour.enqueue(outcomes)

    def fail_matching(self, outcome: str, *, contains: str | tuple[str, ...] = (),
                      excludes: str | tuple[str, ...] = (), skip: int = 0, times: int | None = None) -> int:
        """Give the chat requests whose messages match ``outcome`` (a ``FaultRule``); return the rule's index.

        ``server.fail_matching("503", contains="item5", excludes="Combine the summaries")``
        fails every attempt of the chunk call whose transcript holds "item5"
        (and not the merge that quotes it); ``skip=2, times=1`` fails only the
        third matching request. ``RequestRecord.rule`` names the rule that struck.
        """
        def strings(value: str | tuple[str, ...]) -> tuple[str, ...]:
            return (value,) if isinstance(value, str) else tuple(value)

        return self.behaviour.add_rule(FaultRule(outcome, strings(contains), strings(excludes), skip, times))

    def reset(self) -> None:
        """Forget the log, the counters, any unused script and the rules added by ``fail_matching``."""
        self._serving.reset()

    @property
    def max_serving(self) -> int:
        """The most requests that held a serving slot at once."""
        return self._serving.max_serving

    @property
    def log(self) -> list[RequestRecord]:
        return self._serving.log

    @property
    def request_count(self) -> int:
        return len(self.log)

    def chat_log(self) -> list[RequestRecord]:
        return [r for r in self.log if r.path.endswith("/chat/completions")]

    # ------------------------------------------------------------ the app
    def _app(self) -> Starlette:
        from starlette.applications import Starlette
        from starlette.routing import Route

        return Starlette(routes=[
            Route("/v1/chat/completions", self._chat, methods=["POST"]),
            Route("/v1/models", self._models, methods=["GET"]),
            Route("/v1/embeddings", self._embeddings, methods=["POST"]),
        ])

    def _http_protocol(self) -> type[asyncio.Protocol]:
        """The h11 protocol of uvicorn, stamping when each request arrived (an answer's clock starts there)."""
        from lyra_lab.backends.simulated._arrival import ArrivalStampedH11

        return ArrivalStampedH11

    def _record(self, request: Request) -> RequestRecord:
        from lyra_lab.backends.simulated._arrival import arrived_at

        return self._serving.record(request.url.path, "authorization" in request.headers, arrived_at(request.scope))

    async def _models(self, request: Request) -> Response:
        from starlette.responses import JSONResponse

        self._record(request).finished = time.monotonic()
        return JSONResponse({"object": "list", "data": [{"id": self.spec.model, "object": "model",
                                                         "owned_by": "lyra-lab-simulated"}]})

    async def _embeddings(self, request: Request) -> Response:
        from starlette.responses import JSONResponse

        rec = self._record(request)
        raw = await self._read_body(request)
        if raw is None:
            return self._client_gone(rec)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None  # answered 400 by the route
        status, answer = await self._embeddings_route.answer(body, rec)
        return JSONResponse(answer, status_code=status)

    async def _chat(self, request: Request) -> Response:
        from starlette.responses import JSONResponse

        rec = self._record(request)
        raw = await self._read_body(request)
        if raw is None:
            return self._client_gone(rec)
        try:
            body = json.loads(raw)
            messages = body["messages"]
            if not isinstance(messages, list) or not messages:
                raise ValueError("messages must be a non-empty list")
        except (ValueError, KeyError, TypeError) as exc:
            return self._fail(rec, 400, f"invalid request: {exc}")
        rec.params = {k: v for k, v in body.items() if k != "messages"}
        if self.keep_bodies:
            rec.body = body
        if self.spec.api_key is not None:
            sent = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            if sent != self.spec.api_key:
                return self._fail(rec, 401, f"Incorrect API key provided: {sent}.")
        rec.stream, rec.model = bool(body.get("stream")), body.get("model")
        rec.max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
        if self.spec.reject_stream_options and "stream_options" in body:
            return self._fail(rec, 400, "Unrecognized request argument supplied: stream_options")
        wait = self.behaviour.rate_limit_wait()
        if wait > 0:
            rec.outcome, rec.retry_after = "rate_limited", round(wait + 0.0005, 3)  # rounded up to the ms
            return self._fail(rec, 429, "Rate limit reached for requests; please retry later.",
                              {"Retry-After": f"{rec.retry_after:.3f}"})
        rec.outcome, rec.rule = self.behaviour.decide(messages_text(messages))
        outcome = rec.outcome
        if outcome in ERROR_STATUSES:
            headers = None
            if outcome == "429" and self.spec.retry_after_s is not None:
                rec.retry_after = self.spec.retry_after_s
                headers = {"Retry-After": f"{self.spec.retry_after_s:g}"}
            return self._fail(rec, ERROR_STATUSES[outcome], f"simulated {outcome} fault (injected)", headers)
        if outcome == "hang":
            await self._serving.hang()
            return self._fail(rec, 504, "simulated hang ended")
        if rec.stream:
            # The stream itself queues for a slot and waits out the latency, so a
            # slot is only ever taken by a generator that will release it.
            return stream_response(self._serving, rec, messages, body)
        serving = self._serving
        await serving.enter(rec)
        try:
            pace = serving.pace(rec)
            pieces, finish = serving.reply(rec, messages)
            # The answer is rendered before its deadline (as a real server has it generated by then), so
            # what is left after it is only sending it: its encoding is not added to the spec's time.
            answer: Response
            if outcome in ("malformed", "cut"):
                from starlette.responses import Response

                answer = Response('{"id": "chatcmpl-sim", "choices": [{"mess', media_type="application/json")
            else:
                answer = JSONResponse(self._completion_body(rec, " ".join(pieces), finish))
            await pace.until(len(pieces), exact=True)  # one wait to the answer's deadline, met to the tick
            return answer
        finally:
            serving.leave(rec)

    # ------------------------------------------------------------ helpers
    @staticmethod
    async def _read_body(request: Request) -> bytes | None:
        """The request's body; None when its client left before sending all of it (a killed worker, Ctrl-C)."""
        from starlette.requests import ClientDisconnect

        try:
            return await request.body()
        except ClientDisconnect:
            return None

    @staticmethod
    def _client_gone(rec: RequestRecord) -> Response:
        """A request whose client left mid-body: recorded as such (status 499, nginx's word), nothing answered."""
        from starlette.responses import Response

        rec.outcome, rec.status, rec.finished = "client_gone", 499, time.monotonic()
        return Response(status_code=499)

    def _fail(self, rec: RequestRecord, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
        from starlette.responses import JSONResponse

        rec.status, rec.finished = status, time.monotonic()
        return JSONResponse(error_body(status, message), status_code=status, headers=headers)

    def _completion_body(self, rec: RequestRecord, text: str, finish: str) -> dict[str, Any]:
        message = {"role": "assistant", "content": text}
        body = {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion",
                "created": int(time.time()), "model": self.spec.model,
                "system_fingerprint": SIMULATED_FINGERPRINT,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
        if self.spec.include_usage:
            body["usage"] = self._serving.usage(rec)
        return body
