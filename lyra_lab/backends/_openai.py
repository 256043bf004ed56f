"""One backend over the ``openai`` client for any OpenAI-compatible endpoint.

OpenAI, llama.cpp's server, Ollama, vLLM, LM Studio and lyra-lab's own
``SimulatedServer`` all speak the chat completions protocol; ``OpenAIBackend``
times each call (wall latency, time to first token via streaming), reads the
server's usage (or counts tokens locally and says so), prices it, and retries
under lyra-lab's own policy (the client's built-in retries are off).

Requests: ``acomplete`` on the caller's event loop. ``complete`` sends a streamed
request from the process's request loop (``_loop_thread``) and waits, so the
calling thread is woken once, not once per chunk; a non-streamed one from the
calling thread, which is woken once anyway (handing it to the loop measured
slower: ``docs/performance.md``, "A fast server"), on an HTTP client it has
to itself while the call lasts (``_client_stack``), which sends the requests after its first
from the URL and headers the SDK built for that one (``_request_template``; each event loop's
client likewise). At most ``max_concurrency``
calls are in flight from the threads that share a backend, and from each loop.

Time: each attempt is bounded by ``timeout_s``; a call's ``deadline`` (a
``time.monotonic()`` instant) bounds the whole call, the wait for a
concurrency slot included (``lyra_lab.backends._retry``).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, NamedTuple, Sequence

from lyra_lab.backends._backend_config import BackendConfig, safe_url
from lyra_lab.backends._client_stack import ClientStack
from lyra_lab.backends._loop_thread import loop_thread
from lyra_lab.backends._openai_stream import (Answer, ChatRequest, StreamAccumulator, answer_from_body, aread_events,
                                              build_request)
from lyra_lab.backends._request_template import AsyncClient, SyncClient
from lyra_lab.backends._retry import CallTimes, acall_with_retries, call_with_retries
from lyra_lab.backends._tokens import token_counter
from lyra_lab.backends._types import BackendError, Capabilities, Completion, Message, Usage
from lyra_lab.backends.simulated import SIMULATED_FINGERPRINT

if TYPE_CHECKING:
    import ssl

    import httpx2
    import openai

log = logging.getLogger("lyra_lab.backends")

# Per-message framing tokens of the chat format (OpenAI's published estimate),
# used only when a server reports no usage.
_TOKENS_PER_MESSAGE = 3
_REPLY_PRIMING = 3


# When this thread's last request was handed to the socket (``time.perf_counter()``): the
# HTTP client's request hook sets it once the request is built, so an attempt's latency
# counts from the sending, not from the openai client's own work before it.
class _Sent(threading.local):
    at = 0.0  # 0: no request sent by this thread yet


_SENT = _Sent()


def _mark_sent(request: object) -> None:
    _SENT.at = time.perf_counter()


def _sent_at() -> float:
    """When this thread's current request was sent (now, if the hook did not run)."""
    return _SENT.at or time.perf_counter()


# The same for a request sent on an event loop: when this task's request was handed to the socket (``time.perf_counter()``): the HTTP
# client's request hook sets it once the request is built (the client awaits its hooks inside
# the request's task), so an attempt's latency counts from the sending, not from the openai
# client's own work before it.
_ASENT: contextvars.ContextVar[float] = contextvars.ContextVar("lyra_lab_request_sent", default=0.0)


async def _amark_sent(request: object) -> None:
    _ASENT.set(time.perf_counter())


def _asent_at() -> float:
    """When this task's current request was sent (now, if the hook did not run)."""
    return _ASENT.get() or time.perf_counter()


# The request goes out through the client's documented ``post`` for requests it does not type
# ("Making custom/undocumented requests" in openai's README): the same client, URL, headers,
# timeout and status errors as ``chat.completions.create``, without the SDK's per-request walk
# of the body against its TypedDicts, which returns our body unchanged and cost ~0.5 ms of CPU
# a request, a fifth of a grid's client time (``docs/performance.md``, "A fast server").
# ``stream=True``: the response comes unread, so its last byte is timed here.
def _options(request: ChatRequest, timeout: float) -> openai.RequestOptions:
    return {"timeout": timeout, "headers": dict(request.headers), "params": dict(request.query)}


def _post_chat(client: openai.OpenAI, request: ChatRequest, timeout: float) -> httpx2.Response:
    """POST ``request`` to the client's ``/chat/completions``; the response unread (the caller closes it).

    Raises:
        openai.APIStatusError, openai.APIConnectionError, openai.APITimeoutError: as ``create`` does.
    """
    import httpx2

    return client.post("/chat/completions", cast_to=httpx2.Response, body=request.body,
                       options=_options(request, timeout), stream=True)


async def _apost_chat(client: openai.AsyncOpenAI, request: ChatRequest, timeout: float) -> httpx2.Response:
    """``_post_chat`` on the event loop."""
    import httpx2

    return await client.post("/chat/completions", cast_to=httpx2.Response, body=request.body,
                             options=_options(request, timeout), stream=True)


def _no_slot(backend: OpenAIBackend, queued: float) -> BackendError:
    """The error of a call whose deadline passed while it waited for a concurrency slot (since ``queued``)."""
    return BackendError(backend.name, f"the call's deadline passed after {time.perf_counter() - queued:.2f}s "
                        f"waiting for one of {backend.config.max_concurrency} concurrency slot(s); "
                        "no request was sent", attempts=0, gave_up="deadline")


def _rejects_stream_options(exc: openai.APIStatusError) -> bool:
    # Older OpenAI-compatible servers answer 400/422 naming the field they do not know.
    return exc.status_code in (400, 422) and "stream_options" in f"{exc.message} {exc.body}"


class OpenAIBackend:
    """A ``Backend`` over an OpenAI-compatible endpoint.

    Args:
        config: where the endpoint is and how to call it.
        counter: counts tokens when a server reports no usage (a local
            server's own tokenizer, say); default: ``token_counter(model)``.
            Such counts are flagged ``Usage.estimated``.

    Raises:
        ConfigError: the config names an API-key variable that is not set.
    """

    def __init__(self, config: BackendConfig, counter: Callable[[str], int] | None = None):
        self.config = config
        self.name = config.name
        self.model = config.model
        self._key = config.api_key()  # fail fast, before any call is made
        self._price = config.price()
        self._policy = config.retry_policy
        self._caps: tuple[BackendConfig, Capabilities] | None = None
        self._slots = threading.BoundedSemaphore(config.max_concurrency)
        self._lock = threading.Lock()
        # complete's clients for non-streamed requests: one a call in flight (``_client_stack``); every
        # client of this backend shares one TLS context (making one reads the system's certificates: ~25 ms of CPU)
        # a client's later requests reuse the URL and headers the SDK built for its first (``_request_template``)
        self._clients: ClientStack[SyncClient] = ClientStack(self._new_sync_client)
        self._tls: ssl.SSLContext | None = None
        # acomplete's client and concurrency slots on each event loop (they cannot move between loops)
        self._on_loops: dict[asyncio.AbstractEventLoop, _LoopClient] = {}
        self._counter = counter
        # Flipped off once a server rejects ``stream_options`` and accepts the call without it.
        self._stream_options_ok = True

    def __reduce__(self) -> tuple[Any, ...]:
        # For process pools: the config travels, never the key; the receiving
        # process reads the key from its own environment, and counts missing
        # usage with token_counter(model) (a custom counter does not travel).
        return (type(self), (self.config,))

    def __repr__(self) -> str:
        url = self.describe()["base_url"]
        return f"OpenAIBackend(name={self.name!r}, model={self.model!r}, base_url={url!r})"

    def identity(self) -> dict[str, Any]:
        return self.config.identity()

    def describe(self) -> dict[str, Any]:
        return self.config.describe()

    @property
    def capabilities(self) -> Capabilities:
        """Declared by the config: streaming, simulated, price, ``max_concurrency``, the endpoint.

        Usage comes from the server when it sends it, else is counted locally
        (``Usage.estimated``). Rebuilt when the config is replaced (the local
        backend moving to a new server).
        """
        config = self.config
        if self._caps is None or self._caps[0] is not config:
            caps = Capabilities(identity=self.identity(), description=self.describe(), simulated=config.simulated,
                                streaming=config.stream, reports_usage=True,
                                max_concurrency=config.max_concurrency, price=self._price,
                                endpoint=safe_url(config.base_url))
            self._caps = (config, caps)
        return self._caps[1]

    # ---------------------------------------------------------------- sync
    def complete(self, messages: Sequence[Message], *, deadline: float | None = None,
                 **params: object) -> Completion:
        """Complete ``messages``; call ``params`` override the config's defaults.

        Each attempt is bounded by the config's ``timeout_s``; ``deadline`` (a
        ``time.monotonic()`` instant) bounds the whole call: the wait for a
        concurrency slot, every attempt and every backoff. The completion's
        ``latency_s``/``ttft_s`` time the attempt that answered and
        ``attempts`` counts the requests sent; ``meta`` adds ``attempts``,
        ``queue_s`` (waiting for a concurrency slot), ``retry_s`` (failed
        attempts and backoff, from the slot taken to the answering request sent),
        ``sent_at`` (that send, a ``time.perf_counter()`` instant), and for a
        streamed answer ``chunk_times_s`` (when each chunk carrying choices
        arrived, seconds into the answering attempt: what TTFT, inter-token
        latency and vLLM's end of a request, its last such chunk, are timed by).

        Raises:
            BackendError: HTTP status + provider message, once retries are spent
                or the deadline leaves no time for another attempt.
            ValueError: a ``timeout`` call parameter (the backend's ``timeout_s``
                bounds each attempt; ``deadline`` bounds the call).
        """
        if self.config.stream:
            return loop_thread().run(self.acomplete(messages, deadline=deadline, **params))
        request = self._request(messages, params)
        queued = time.perf_counter()
        # The slot is held through backoff sleeps: a struggling server gets less load, not more.
        if not self._slots.acquire(timeout=None if deadline is None else max(0.0, deadline - time.monotonic())):
            raise _no_slot(self, queued)
        try:
            began = time.perf_counter()
            answer, attempts = call_with_retries(
                lambda timeout: self._attempt(request, timeout), self._policy, self.name, (self._key,),
                times=CallTimes(self.config.timeout_s, deadline))
        finally:
            self._slots.release()
        return self._completion(request.messages, answer, attempts, began - queued, began)

    def _attempt(self, request: ChatRequest, timeout: float) -> Answer:
        # The raw body, timed from the moment the request is sent (``_mark_sent``) to its last
        # byte: the openai client's request building and any parsing are the client's time, not
        # the server's; one orjson.loads replaces its model objects.
        with self._clients.client() as client:
            response = client.post_chat(request, timeout, _post_chat)
            try:
                body = response.read()
                ended = time.perf_counter()
            finally:
                response.close()
        return answer_from_body(body, _sent_at(), ended)

    def _new_sync_client(self) -> SyncClient:
        import openai

        with self._lock:
            tls, base_url = self._tls_held(), self.config.base_url
        http = openai.DefaultHttpxClient(event_hooks={"request": [_mark_sent]}, verify=tls)
        return SyncClient(openai.OpenAI(api_key=self._key, base_url=base_url, max_retries=0,
                                        timeout=self.config.timeout_s, http_client=http), http)

    def _tls_held(self) -> ssl.SSLContext:
        """The TLS context all this backend's clients verify with, made on first use (``_lock`` held)."""
        if self._tls is None:
            import httpx2

            self._tls = httpx2.create_ssl_context()  # what a client makes when given none
        return self._tls

    # ---------------------------------------------------------------- event loop
    async def acomplete(self, messages: Sequence[Message], *, deadline: float | None = None,
                        **params: object) -> Completion:
        """``complete`` on the running event loop (``complete`` runs this on the process's request loop).

        At most ``max_concurrency`` calls of one loop are in flight; the slot is held through
        backoff sleeps (a struggling server gets less load, not more). ``bench`` drives it from
        its own loop.

        Raises:
            BackendError, ValueError: as ``complete``.
        """
        request = self._request(messages, params)
        on_loop = self._loop_client()
        queued = time.perf_counter()
        try:
            await asyncio.wait_for(on_loop.slots.acquire(),
                                   None if deadline is None else max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            raise _no_slot(self, queued) from None
        try:
            began = time.perf_counter()
            answer, attempts = await acall_with_retries(
                lambda timeout: self._aattempt(on_loop.client, request, timeout, deadline), self._policy,
                self.name, (self._key,), times=CallTimes(self.config.timeout_s, deadline))
        finally:
            on_loop.slots.release()
        return self._completion(request.messages, answer, attempts, began - queued, began)

    async def aclose(self) -> None:
        """Close the running event loop's HTTP connections (the next call there opens new ones)."""
        with self._lock:
            on_loop = self._on_loops.pop(asyncio.get_running_loop(), None)
        if on_loop is not None:
            await on_loop.client.close()

    def _loop_client(self) -> _LoopClient:
        """The running loop's async client and slots, made on its first call; those of closed loops are dropped."""
        import openai

        loop = asyncio.get_running_loop()
        with self._lock:
            on_loop = self._on_loops.get(loop)
            if on_loop is None:
                for ended in [other for other in self._on_loops if other.is_closed()]:
                    del self._on_loops[ended]  # its connections went with its loop
                http = openai.DefaultAsyncHttpxClient(event_hooks={"request": [_amark_sent]}, verify=self._tls_held())
                client = AsyncClient(openai.AsyncOpenAI(api_key=self._key, base_url=self.config.base_url,
                                                        max_retries=0, timeout=self.config.timeout_s,
                                                        http_client=http), http)
                on_loop = self._on_loops[loop] = _LoopClient(client, asyncio.Semaphore(self.config.max_concurrency))
            return on_loop

    async def _aattempt(self, client: AsyncClient, request: ChatRequest, timeout: float,
                        deadline: float | None) -> Answer:
        import openai

        if not self.config.stream:
            response = await client.post_chat(request, timeout, _apost_chat)
            try:
                body = await response.aread()
                ended = time.perf_counter()
            finally:
                await response.aclose()
            return answer_from_body(body, _asent_at(), ended)
        with_options = self._stream_options_ok
        try:
            return await self._astream_once(client, request, timeout, deadline, with_options)
        except openai.APIStatusError as exc:
            if not (with_options and _rejects_stream_options(exc)):
                raise
            answer = await self._astream_once(client, request, timeout, deadline, False)
            self._note_no_stream_options(exc)
            return answer

    async def _astream_once(self, client: AsyncClient, request: ChatRequest, timeout: float,
                            deadline: float | None, with_options: bool) -> Answer:
        response = await client.post_chat(request.streamed(usage=with_options), timeout, _apost_chat)
        try:
            acc = StreamAccumulator(started=_asent_at())
            await aread_events(response.aiter_lines(), acc, response.request, deadline)
        finally:
            await response.aclose()
        return acc.answer()

    # ------------------------------------------------------------- helpers
    def _request(self, messages: Sequence[Message], params: Mapping[str, Any]) -> ChatRequest:
        if "timeout" in params:
            raise ValueError("'timeout' is not a call parameter: the backend's timeout_s bounds each attempt "
                             "(set it in the backend spec); pass deadline= (a time.monotonic() instant) to bound "
                             "the whole call, retries included")
        return build_request(self.model, messages, {**self.config.params, **params})

    def _note_no_stream_options(self, exc: openai.APIStatusError) -> None:
        self._stream_options_ok = False
        log.info("%s: server rejected stream_options (HTTP %s); streaming without usage from now on",
                 self.name, exc.status_code)

    def _completion(self, messages: list[dict[str, Any]], answer: Answer, attempts: int,
                    queue_s: float, began: float) -> Completion:
        estimated = answer.prompt_tokens is None or answer.completion_tokens is None
        if answer.prompt_tokens is not None and answer.completion_tokens is not None:
            prompt, completion = answer.prompt_tokens, answer.completion_tokens
        else:
            count = self._count()
            framing = _TOKENS_PER_MESSAGE * len(messages) + _REPLY_PRIMING
            prompt = sum(count(str(m.get("content") or "")) for m in messages) + framing
            completion = count(answer.text)
        usage = Usage(prompt, completion, self._price.cost(prompt, completion), calls=1, estimated=estimated)
        # The answering request's send ends the client's own wait: slot, failed attempts, backoff.
        sent_at = answer.sent_at if answer.sent_at is not None else began
        meta: dict[str, object] = {"attempts": attempts, "queue_s": queue_s, "retry_s": max(0.0, sent_at - began),
                                   "sent_at": sent_at,
                                   "price_known": self._price.known, "response_model": answer.response_model}
        if answer.chunk_times:
            meta["chunk_times_s"] = answer.chunk_times
        # The simulated server marks its answers, so they stay labelled even
        # when a config forgot to say ``simulated=True``.
        simulated = self.config.simulated or answer.fingerprint == SIMULATED_FINGERPRINT
        return Completion(text=answer.text, usage=usage, latency_s=answer.latency_s, backend=self.name,
                          model=self.model, ttft_s=answer.ttft_s, cached=False, simulated=simulated,
                          finish_reason=answer.finish_reason, meta=meta, attempts=attempts)

    def _count(self) -> Callable[[str], int]:
        if self._counter is None:
            self._counter = token_counter(self.model)
        return self._counter

    def close(self) -> None:
        """Close the HTTP connections of ``complete``'s calls (the next call opens new ones)."""
        loop = loop_thread()
        self._clients.close()
        with self._lock:
            open_there = loop.loop in self._on_loops
        if open_there:
            loop.run(self.aclose())


class _LoopClient(NamedTuple):
    """What ``acomplete`` uses on one event loop: its async client and its concurrency slots."""

    client: AsyncClient
    slots: asyncio.Semaphore
