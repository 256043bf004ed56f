"""A chat request the openai client built once, reused as a template for the next ones on its HTTP client.

For every request, the openai client's ``post`` copies its options twice, merges and validates
headers, parses and joins the URL and builds the request object before httpx sends it: ~0.4 ms of
CPU a request, about as much as httpx's own sending and reading, and a fifth of a summarizing grid's
client time against a fast server (``docs/performance.md``, "A fast server"). For lyra-lab's calls
all of it comes out the same each time but the body and the timeout: the API key is fixed, the SDK's
retries are off (its retry count header is always 0) and the call's extra headers and query are
those of the backend's config and params.

So a ``SyncClient`` sends a call's first request through the SDK (``post``, as ``create`` would),
keeps the URL and headers the SDK built for it (``Template``), and sends later requests with the same
extra headers and query on the same httpx client with that URL and those headers, their own body
(serialized as the SDK serializes it) and timeout (the SDK's ``x-stainless-read-timeout`` header and
httpx timeout). What may fail fails as through the SDK: ``openai.APITimeoutError``,
``openai.APIConnectionError``, and for an error status the client's own ``APIStatusError`` subclass
(``RateLimitError``…), made from the response by the SDK. ``AsyncClient`` does the same on an event
loop (``acomplete``, streamed requests included). ``tests/backends/test_request_template.py``
checks that both ways send the same bytes and raise the same errors.
"""

from __future__ import annotations

import json
import ssl
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Mapping, NamedTuple

if TYPE_CHECKING:
    import httpx2
    import openai

    from lyra_lab.backends._openai_stream import ChatRequest

#: headers httpx sets from the request itself (its URL, its body)
_OWN = frozenset({"host", "content-length"})
_READ_TIMEOUT = "x-stainless-read-timeout"


def _key(request: ChatRequest) -> str:
    """What besides the body and timeout goes into the SDK's request: the call's extra headers and query.

    Their ``repr``: equal only for the same values of the same types (``True`` and ``1`` differ).
    """
    return repr((sorted(request.headers.items()), sorted(request.query.items(), key=lambda item: item[0])))


def dumps(body: Mapping[str, Any]) -> bytes:
    """``body`` as the SDK serializes a JSON body (``openai._utils.openapi_dumps`` on plain JSON values)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class Template(NamedTuple):
    """The URL and headers the SDK built for a request with extra headers and query ``key``."""

    key: str
    url: httpx2.URL
    headers: tuple[tuple[str, str], ...]  # without host, content-length and the read timeout

    @classmethod
    def of(cls, sent: httpx2.Request, request: ChatRequest) -> Template:
        """The template of ``sent``, the SDK's request for ``request``."""
        headers = tuple((name, value) for name, value in sent.headers.items()
                        if name.lower() not in _OWN and name.lower() != _READ_TIMEOUT)
        return cls(_key(request), sent.url, headers)

    def build(self, http: httpx2.Client | httpx2.AsyncClient, request: ChatRequest, timeout: float) -> httpx2.Request:
        """The request for ``request``: this URL and these headers, its body, ``timeout`` as the SDK sets it."""
        return http.build_request("POST", self.url, content=dumps(request.body), timeout=timeout,
                                  headers=[*self.headers, (_READ_TIMEOUT, str(float(timeout)))])


class SyncClient:
    """An openai client, its httpx client, and the template its first chat request left (``post_chat``).

    One call at a time uses it (``_client_stack``).
    """

    def __init__(self, client: openai.OpenAI, http: httpx2.Client):
        self.client, self.http = client, http
        self.template: Template | None = None

    def close(self) -> None:
        self.client.close()

    def post_chat(self, request: ChatRequest, timeout: float,
                  sdk_post: Callable[[openai.OpenAI, ChatRequest, float], httpx2.Response]) -> httpx2.Response:
        """POST ``request``; the response unread (the caller closes it).

        ``sdk_post`` sends it through the openai client; it does when no template fits ``request``,
        and the template of what it sent is kept.

        Raises:
            openai.APIStatusError, openai.APIConnectionError, openai.APITimeoutError: as the SDK's ``post``.
        """
        template = self.template
        if template is None or template.key != _key(request):
            response = sdk_post(self.client, request, timeout)
            self.template = Template.of(response.request, request)
            return response
        return self._send(template, request, timeout)

    def _send(self, template: Template, request: ChatRequest, timeout: float) -> httpx2.Response:
        import httpx2

        sent = template.build(self.http, request, timeout)
        try:
            response = self.http.send(sent, stream=True)
        except (httpx2.RequestError, ssl.SSLError) as exc:
            raise _transport_error(exc, sent) from exc
        if not response.is_success:
            response.read()
            response.close()
            raise self.client._make_status_error_from_response(response) from None  # the SDK's own error types
        return response


class AsyncClient:
    """``SyncClient`` on an event loop: an ``openai.AsyncOpenAI``, its httpx client and their template."""

    def __init__(self, client: openai.AsyncOpenAI, http: httpx2.AsyncClient):
        self.client, self.http = client, http
        self.template: Template | None = None

    async def close(self) -> None:
        await self.client.close()

    async def post_chat(self, request: ChatRequest, timeout: float,
                        sdk_post: Callable[[openai.AsyncOpenAI, ChatRequest, float], Awaitable[httpx2.Response]],
                        ) -> httpx2.Response:
        """``SyncClient.post_chat`` on the running loop (``sdk_post`` awaited)."""
        import httpx2

        template = self.template
        if template is None or template.key != _key(request):
            response = await sdk_post(self.client, request, timeout)
            self.template = Template.of(response.request, request)
            return response
        sent = template.build(self.http, request, timeout)
        try:
            response = await self.http.send(sent, stream=True)
        except (httpx2.RequestError, ssl.SSLError) as exc:
            raise _transport_error(exc, sent) from exc
        if not response.is_success:
            await response.aread()
            await response.aclose()
            raise self.client._make_status_error_from_response(response) from None
        return response


def _transport_error(exc: BaseException, sent: httpx2.Request) -> openai.APIConnectionError:
    """What the SDK raises for a request that got no response: a timeout, or a connection error."""
    import httpx2
    import openai

    if isinstance(exc, httpx2.TimeoutException):
        return openai.APITimeoutError(request=sent)
    return openai.APIConnectionError(request=sent)
