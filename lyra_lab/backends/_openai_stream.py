"""Turning one OpenAI chat response (streamed or not) into the parts of a ``Completion``.

Shared by the thread and event-loop paths of ``OpenAIBackend`` (``complete``, ``acomplete``). A stream that
ends without a ``finish_reason`` was cut short, which is a retryable
``StreamError`` rather than a silently truncated answer.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, AsyncIterable, Iterable, Iterator, Mapping, Sequence

from lyra_lab.backends._retry import DeadlineExceeded, StreamError

if TYPE_CHECKING:
    import httpx2  # the HTTP client the openai package is built on
    from openai.types.chat import ChatCompletion

# Parameters of the chat completions API; any other generation parameter
# (repeat_penalty, top_k, min_p…) is a server extension sent at the body's top level, as the
# openai client's ``extra_body`` would put it.
OPENAI_PARAMS = frozenset({
    "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
    "max_completion_tokens", "max_tokens", "metadata", "modalities", "n", "parallel_tool_calls",
    "prediction", "presence_penalty", "prompt_cache_key", "reasoning_effort", "response_format",
    "safety_identifier", "seed", "service_tier", "stop", "store", "temperature", "tool_choice", "tools",
    "top_logprobs", "top_p", "user", "verbosity", "web_search_options",
})


@dataclass(frozen=True)
class ChatRequest:
    """One chat completions request as it is sent.

    Attributes:
        body: the JSON body: model, messages, the API's parameters and any server extensions
            (``extra_body`` entries and unknown parameters) at its top level.
        headers: extra HTTP headers (the ``extra_headers`` param).
        query: extra query parameters (the ``extra_query`` param).
    """

    body: dict[str, Any]
    headers: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, object] = field(default_factory=dict)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body["messages"]

    def streamed(self, usage: bool) -> "ChatRequest":
        """The same request streamed; ``usage``: ask for the usage chunk (``stream_options``)."""
        extra: dict[str, Any] = {"stream": True, **({"stream_options": {"include_usage": True}} if usage else {})}
        return ChatRequest({**self.body, **extra}, self.headers, self.query)


def build_request(model: str, messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any]) -> ChatRequest:
    """The request of ``messages`` under ``params`` (not streamed; the backend owns stream and timeout)."""
    if not messages:
        raise ValueError("complete() needs at least one message")
    if params.get("n", 1) != 1:
        raise ValueError("n != 1 is not supported: one call gives one completion")
    body: dict[str, Any] = {"model": model, "messages": [dict(m) for m in messages]}
    extra: dict[str, Any] = {}
    headers: dict[str, str] = {}
    query: dict[str, object] = {}
    for key, value in params.items():
        if key == "extra_body":
            extra.update(value or {})
        elif key == "extra_headers":
            headers.update(value or {})
        elif key == "extra_query":
            query.update(value or {})
        elif key in ("stream", "stream_options", "model", "messages"):
            raise ValueError(f"{key!r} is set by the backend, not by call params")
        elif key in OPENAI_PARAMS:
            body[key] = value
        else:
            extra[key] = value
    return ChatRequest({**body, **extra}, headers, query)


@dataclass
class Answer:
    """What one successful attempt produced, before costing."""

    text: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float
    ttft_s: float | None
    response_model: str | None
    fingerprint: str | None = None
    chunk_times: tuple[float, ...] = ()  # seconds from the request to each streamed chunk carrying choices
    sent_at: float | None = None  # when the request was sent (a ``time.perf_counter()`` instant)


class StreamAccumulator:
    """Collects a stream's chunks (decoded JSON objects): text, time to first token, finish reason, usage.

    ``chunk_times``: when each chunk carrying ``choices`` arrived (seconds after
    ``started``), what vLLM's benchmark times TTFT, inter-token latency and a request's
    end (E2EL: its last chunk carrying ``choices``) by; a chunk without them (the usage
    chunk) and ``[DONE]`` are not timed.
    """

    def __init__(self, started: float | None = None) -> None:
        self.started = time.perf_counter() if started is None else started
        self.parts: list[str] = []
        self.ttft_s: float | None = None
        self.finish_reason: str | None = None
        self.usage: Mapping[str, Any] | None = None  # the last chunk's usage, as decoded
        self.model: str | None = None
        self.fingerprint: str | None = None
        self.chunk_times: list[float] = []

    def add(self, chunk: Mapping[str, Any]) -> None:
        if chunk.get("usage") is not None:
            self.usage = chunk["usage"]
        self.model = chunk.get("model") or self.model
        self.fingerprint = chunk.get("system_fingerprint") or self.fingerprint
        choices = chunk.get("choices")
        if choices:
            self.chunk_times.append(time.perf_counter() - self.started)
        for choice in choices or ():
            delta = choice.get("delta")
            content = delta.get("content") if isinstance(delta, Mapping) else None
            if content:
                if self.ttft_s is None:
                    self.ttft_s = time.perf_counter() - self.started
                self.parts.append(content)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]

    def answer(self) -> Answer:
        if self.finish_reason is None:
            raise StreamError(
                f"stream cut short: ended without a finish_reason after {len(self.parts)} chunk(s)")
        prompt, completion = _usage_pair(self.usage)
        return Answer("".join(self.parts), self.finish_reason, prompt, completion,
                      time.perf_counter() - self.started, self.ttft_s, self.model, self.fingerprint,
                      tuple(self.chunk_times), self.started)


class EventReader:
    """The server-sent events of a chat stream, fed line by line into ``acc`` (one JSON decode each).

    One ``orjson.loads`` per event instead of the openai client's per-event
    model objects: measured on this machine, ~1.7 ms of client CPU per 48-token
    streamed reply against ~6.5 ms (``python benchmarks/concurrent_cells.py``
    shows what that does at 16 requests in flight). ``deadline`` (a
    ``time.monotonic()`` instant): the client's timeout bounds each wait for an
    event, so a stream trickling in is stopped here once the call's deadline passed.
    ``read_events`` and ``aread_events`` drive it from a thread's and an event loop's lines.
    """

    def __init__(self, acc: StreamAccumulator, request: httpx2.Request, deadline: float | None = None):
        self.acc, self.request, self.deadline = acc, request, deadline
        self._data: list[str] = []
        self._done = False

    def line(self, line: str) -> None:
        """One line of the body.

        Raises:
            openai.APIError: an ``error`` object inside the stream (a provider failing mid-answer),
                with the provider's message, as the openai client raises it.
            json.JSONDecodeError: an event that is not JSON (orjson's error is one).
            DeadlineExceeded: ``deadline`` passed before the stream ended.
        """
        if line:
            if line.startswith("data:"):
                self._data.append(line[6:] if line.startswith("data: ") else line[5:])
            return  # comments (":"), event names, ids and retry fields carry nothing for chat
        if not self._data:
            return
        payload, self._data = "\n".join(self._data), []
        if self._done or payload.startswith("[DONE]"):
            self._done = True
            return
        self._event(payload)
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise DeadlineExceeded(f"the call's deadline passed mid-stream after {len(self.acc.parts)} chunk(s)")

    def end(self) -> None:
        """The body ended: a last event without its blank line still counts."""
        if self._data and not self._done and not "\n".join(self._data).startswith("[DONE]"):
            self._event("\n".join(self._data))

    def _event(self, payload: str) -> None:
        import openai
        import orjson

        chunk = orjson.loads(payload)
        if isinstance(chunk, Mapping) and chunk.get("error"):
            error = chunk["error"]
            message = error.get("message") if isinstance(error, Mapping) else None
            raise openai.APIError(message if isinstance(message, str) and message
                                  else "An error occurred during streaming", request=self.request, body=error)
        if isinstance(chunk, Mapping):
            self.acc.add(chunk)


@contextlib.contextmanager
def _breaks_as_stream_errors() -> Iterator[None]:
    """A connection that breaks while the body is read (an httpx/httpcore error) raises a retryable ``StreamError``."""
    try:
        yield
    except Exception as exc:
        if type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "httpcore2"):
            raise StreamError(f"stream broken while reading: {type(exc).__name__}: {exc}") from exc
        raise


def read_events(lines: Iterable[str], acc: StreamAccumulator, request: httpx2.Request, deadline: float | None = None) -> None:
    """Feed the server-sent events of a chat stream into ``acc``, reading the body to its end (``EventReader``).

    Reading to the end (past ``[DONE]``) lets the connection go back to the pool.

    Raises:
        openai.APIError: an ``error`` object inside the stream.
        json.JSONDecodeError: an event that is not JSON.
        StreamError: the connection broke while the body was read.
        DeadlineExceeded: ``deadline`` passed before the stream ended.
    """
    reader = EventReader(acc, request, deadline)
    with _breaks_as_stream_errors():
        for line in lines:
            reader.line(line)
    reader.end()


async def aread_events(lines: AsyncIterable[str], acc: StreamAccumulator, request: httpx2.Request,
                       deadline: float | None = None) -> None:
    """``read_events`` for a body read on an event loop.

    Raises:
        openai.APIError, json.JSONDecodeError, StreamError, DeadlineExceeded: as ``read_events``.
    """
    reader = EventReader(acc, request, deadline)
    with _breaks_as_stream_errors():
        async for line in lines:
            reader.line(line)
    reader.end()


def answer_from_body(body: bytes, started: float, ended: float) -> Answer:
    """An ``Answer`` from a non-streamed response's raw body, read in full at ``ended``.

    One ``orjson.loads`` instead of the openai client's model objects; the
    latency is ``ended - started``, so parsing is not counted as the server's time.

    Raises:
        json.JSONDecodeError: a body that is not JSON (orjson's error is one).
        StreamError: JSON without choices.
    """
    import orjson

    data = orjson.loads(body)
    choices = data.get("choices") if isinstance(data, Mapping) else None
    if not choices or not isinstance(choices[0], Mapping):
        raise StreamError(f"malformed response: no choices in {body[:200]!r}")
    message = choices[0].get("message")
    text = (message.get("content") if isinstance(message, Mapping) else None) or ""
    prompt, completion = _usage_pair(data.get("usage"))
    return Answer(text, choices[0].get("finish_reason"), prompt, completion, ended - started, None,
                  data.get("model"), data.get("system_fingerprint"), sent_at=started)


def answer_from_response(response: ChatCompletion | str | bytes, started: float) -> Answer:
    """An ``Answer`` from a non-streamed ``ChatCompletion`` (a str or bytes: a malformed body the client passed on)."""
    if isinstance(response, (str, bytes)) or not getattr(response, "choices", None):
        raise StreamError(f"malformed response: no choices in {str(response)[:200]!r}")
    choice = response.choices[0]
    text = getattr(choice.message, "content", None) or ""
    prompt, completion = _usage_pair(getattr(response, "usage", None))
    return Answer(text, choice.finish_reason, prompt, completion, time.perf_counter() - started, None,
                  getattr(response, "model", None), getattr(response, "system_fingerprint", None), sent_at=started)


def _usage_pair(usage: object) -> tuple[int | None, int | None]:
    if usage is None:
        return None, None
    if isinstance(usage, Mapping):  # a streamed chunk's, decoded JSON
        prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    else:  # a ChatCompletion's model object
        prompt = getattr(usage, "prompt_tokens", None)
        completion = getattr(usage, "completion_tokens", None)
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None, None
    return prompt, completion
