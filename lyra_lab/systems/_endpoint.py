"""An OpenAI-compatible endpoint on 127.0.0.1 in front of lyra-lab's own backend and embedder.

A library that only speaks the OpenAI API (mem0) gets its LLM and its
embeddings from here, so every call it makes goes through the cell's
``Backend`` (metered, cached, retried and priced like lyra-lab's own calls) and
``Embedder``.  ``/v1/chat/completions`` forwards the messages and the generation
parameters to ``backend.complete``; ``/v1/embeddings`` embeds with
``embedder.embed`` — as passages, or as queries when the request's model name
ends in ``:query`` (the OpenAI API has no such flag; lyra-lab's mem0 adapter
asks so for searches).  A failed backend call answers HTTP 400 with the
backend's one line (not 5xx: the OpenAI client would retry what lyra-lab's
backend already retried).  ``tally()`` hands over what was served since the
last call: completions, failures, replies that were not the JSON asked for,
embedding requests.

>>> from lyra_lab.backends import FakeLLM, HashingEmbedder
>>> with OpenAIEndpoint(FakeLLM(), HashingEmbedder()) as endpoint:
...     endpoint.base_url.startswith("http://127.0.0.1:") and endpoint.base_url.endswith("/v1")
True
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Awaitable, Callable, Mapping

from lyra_lab._threaded_server import ThreadedServer
from lyra_lab.backends import Backend, BackendError, Completion, Embedder, Message, Usage

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

#: generation parameters passed on to the backend; anything else a client sends is dropped
FORWARDED = ("max_tokens", "temperature", "top_p", "response_format", "stop", "seed")
QUERY_SUFFIX = ":query"

#: a request's JSON body -> the answer's HTTP status and JSON object (one per route)
Answer = Callable[[object], tuple[int, dict[str, object]]]


@dataclass
class Tally:
    """What the endpoint served.

    Attributes:
        usage: the completions' usage, added up (a cached completion counts as a cached call).
        failed_calls: completions the backend failed.
        refused_calls: of those, the ones the provider refused outright (``BackendError.recurs``).
        bad_outputs: replies that were not the JSON object the request asked for.
        embed_calls: embedding requests.
        notes: the distinct failure messages.
    """

    usage: Usage = field(default_factory=Usage)
    failed_calls: int = 0
    refused_calls: int = 0
    bad_outputs: int = 0
    embed_calls: int = 0
    notes: list[str] = field(default_factory=list)


class OpenAIEndpoint(ThreadedServer):
    """Serve ``backend`` and ``embedder`` as ``base_url`` (…/v1) until ``stop()`` (either may be None)."""

    thread_name = "lyra-openai-endpoint"
    start_failure = "the OpenAI-compatible endpoint on port {port} did not start in {timeout_s}s"

    def __init__(self, backend: Backend | None, embedder: Embedder | None, model: str = "lyra-lab"):
        super().__init__()
        self.backend = backend
        self.embedder = embedder
        self.model = model
        self.base_url = ""
        self._tally = Tally()
        self._lock = threading.Lock()

    def _app(self) -> Starlette:
        from starlette.applications import Starlette
        from starlette.routing import Route

        return Starlette(routes=[Route("/v1/chat/completions", self._route(self._complete), methods=["POST"]),
                                 Route("/v1/embeddings", self._route(self._embed), methods=["POST"])])

    def _started_on(self, port: int) -> None:
        self.base_url = f"http://127.0.0.1:{port}/v1"

    def tally(self) -> Tally:
        """What was served since the last call (and start counting anew)."""
        with self._lock:
            out, self._tally = self._tally, Tally()
        return out

    # ------------------------------------------------------------------ routes
    @staticmethod
    def _route(answer: Answer) -> Callable[[Request], Awaitable[Response]]:
        """A route answering ``answer(body)``'s status and JSON, run in a worker thread (backend calls block)."""
        import anyio.to_thread
        from starlette.responses import JSONResponse

        async def handle(request: Request) -> Response:
            body = await request.json()
            status, out = await anyio.to_thread.run_sync(answer, body)
            return JSONResponse(out, status_code=status)

        return handle

    def _complete(self, body: object) -> tuple[int, dict[str, object]]:
        if self.backend is None:
            return 400, _error("this endpoint serves no LLM (the system was opened without a backend)")
        if not isinstance(body, Mapping):
            return 400, _error("the request body is not a JSON object")
        given = _objects(body.get("messages") or [])
        if given is None:
            return 400, _error("messages: expected a list of objects")
        messages: list[Message] = [{"role": str(m.get("role", "user")), "content": str(m.get("content") or "")}
                                   for m in given]
        params = {key: body[key] for key in FORWARDED if body.get(key) is not None}
        try:
            completion = self.backend.complete(messages, **params)
        except BackendError as exc:
            self._count(failed=1, note=str(exc))
            if exc.recurs:  # refused outright: it would fail the same way again
                with self._lock:
                    self._tally.refused_calls += 1
            return 400, _error(str(exc))
        response_format = params.get("response_format")
        wants_json = isinstance(response_format, Mapping) and \
            response_format.get("type") in ("json_object", "json_schema")
        bad = wants_json and not _is_json_object(completion.text)
        self._count(completion=completion, bad=int(bad))
        return 200, _chat_body(completion, self.model)

    def _embed(self, body: object) -> tuple[int, dict[str, object]]:
        if self.embedder is None:
            return 400, _error("this endpoint serves no embedder (the system was opened without one)")
        if not isinstance(body, Mapping):
            return 400, _error("the request body is not a JSON object")
        raw = body.get("input")
        texts = [raw] if isinstance(raw, str) else [str(t) for t in raw] if isinstance(raw, list) else []
        kind = "query" if str(body.get("model", "")).endswith(QUERY_SUFFIX) else "passage"
        vectors = self.embedder.embed(texts, kind=kind)
        self._count(embeds=1)
        return 200, {"object": "list", "model": body.get("model", self.model),
                     "data": [{"object": "embedding", "index": i, "embedding": [float(x) for x in v]}
                              for i, v in enumerate(vectors)],
                     "usage": {"prompt_tokens": 0, "total_tokens": 0}}

    def _count(self, completion: Completion | None = None, failed: int = 0, bad: int = 0, embeds: int = 0,
               note: str = "") -> None:
        with self._lock:
            t = self._tally
            if completion is not None:
                usage = completion.usage
                t.usage = t.usage + (usage + Usage(cached_calls=1) if completion.cached and not usage.cached_calls
                                     else usage)
            t.failed_calls += failed
            t.bad_outputs += bad
            t.embed_calls += embeds
            if note and note not in t.notes:
                t.notes.append(note[:300])


def _is_json_object(text: str) -> bool:
    text = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def _objects(value: object) -> list[Mapping[str, object]] | None:
    """A list of JSON objects (the chat messages) as it is; None when it is anything else."""
    if not isinstance(value, list):
        return None
    objects = [item for item in value if isinstance(item, Mapping)]
    return objects if len(objects) == len(value) else None


def _error(message: str) -> dict[str, object]:
    return {"error": {"message": message, "type": "invalid_request_error"}}


def _chat_body(completion: Completion, model: str) -> dict[str, object]:
    usage = completion.usage
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "finish_reason": completion.finish_reason or "stop",
                                         "message": {"role": "assistant", "content": completion.text}}],
            "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                      "total_tokens": usage.total_tokens}}
