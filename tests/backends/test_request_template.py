"""A client's later chat requests, sent from the template of its first (``_request_template``), are the SDK's.

Same bytes on the wire (method, URL, every header, body) as the openai client's own ``post`` for the
same call; the same errors (types, status, message) for error statuses, timeouts and broken
connections.
"""

from __future__ import annotations

import json

import httpx2
import openai
import pytest

from lyra_lab.backends import BackendConfig, OpenAIBackend, SimulatedServer
from lyra_lab.backends._openai import _post_chat
from lyra_lab.backends._openai_stream import build_request
from lyra_lab.backends._request_template import SyncClient

MESSAGES = [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Carol moved to Lyon — in May. She took the night train."}]
ANSWER = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
          "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
          "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}


def _client(handler, base_url="http://127.0.0.1:9/v1") -> SyncClient:
    http = openai.DefaultHttpxClient(transport=httpx2.MockTransport(handler))
    return SyncClient(openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=0, timeout=30,
                                    http_client=http), http)


def _wire(request: httpx2.Request) -> tuple:
    return request.method, str(request.url), sorted(request.headers.multi_items()), request.content


def test_a_later_request_goes_out_byte_for_byte_as_the_sdks(monkeypatch):
    seen: list[httpx2.Request] = []

    def handler(request):
        seen.append(request)
        return httpx2.Response(200, json=ANSWER)

    client = _client(handler)
    params = {"temperature": 0.5, "seed": 7, "repeat_penalty": 1.3, "extra_headers": {"X-Org": "lab"},
              "extra_query": {"api-version": "2024-01"}}
    request = build_request("m", MESSAGES, {**params, "max_tokens": 6})
    through_sdk = []

    def sdk_post(*args):
        through_sdk.append(args)
        return _post_chat(*args)

    for timeout in (30.0, 12.5):
        for _ in range(2):  # the first learns the template, the second is sent from it
            client.post_chat(request, timeout, sdk_post).close()
        sdk = _post_chat(client.client, request, timeout)  # the SDK itself, for comparison
        sdk.close()
    assert client.template is not None and len(through_sdk) == 1  # the first request only
    first, templated, sdk_30, again, templated_12, sdk_12 = seen
    assert _wire(templated) == _wire(first) == _wire(sdk_30)
    assert _wire(templated_12) == _wire(sdk_12)
    assert templated_12.headers["x-stainless-read-timeout"] == "12.5"
    assert templated_12.extensions["timeout"] == sdk_12.extensions["timeout"]
    assert json.loads(templated.content)["messages"][1]["content"] == MESSAGES[1]["content"]
    assert "—" in templated.content.decode()  # not escaped: the SDK's serialization (ensure_ascii off)


def test_other_extra_headers_or_query_go_through_the_sdk_again():
    seen: list[httpx2.Request] = []

    def handler(request):
        seen.append(request)
        return httpx2.Response(200, json=ANSWER)

    client = _client(handler)
    calls = [{"extra_headers": {"X-A": "1"}}, {"extra_headers": {"X-B": "2"}}, {"extra_query": {"q": "x"}},
             {"extra_query": {"q": True}}, {"extra_query": {"q": 1}}]
    for params in calls:
        client.post_chat(build_request("m", MESSAGES, params), 30.0, _post_chat).close()
    a, b, q, true, one = seen
    assert a.headers["x-a"] == "1" and "x-a" not in b.headers and b.headers["x-b"] == "2"
    assert "x-b" not in q.headers and q.url.params["q"] == "x"
    sdk = [_post_chat(client.client, build_request("m", MESSAGES, c), 30.0) for c in calls[3:]]
    for response in sdk:
        response.close()
    assert [str(r.url) for r in (true, one)] == [str(r.url) for r in seen[5:]]  # as the SDK writes each


@pytest.fixture(scope="module")
def server():
    with SimulatedServer(latency_s=0.0) as running:
        yield running


@pytest.mark.parametrize("outcome,error", [("429", openai.RateLimitError), ("503", openai.InternalServerError),
                                           ("400", openai.BadRequestError)])
def test_an_error_status_is_the_sdks_own_error(server, outcome, error):
    request = build_request("m", MESSAGES, {"max_tokens": 3})
    raised = []
    for learnt in (False, True):
        http = openai.DefaultHttpxClient()
        client = SyncClient(openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0,
                                          http_client=http), http)
        if learnt:
            client.post_chat(request, 5.0, _post_chat).close()
            assert client.template is not None
        server.reset()
        server.enqueue(outcome)
        with pytest.raises(error) as caught:
            client.post_chat(request, 5.0, _post_chat)
        raised.append(caught.value)
        client.close()
    sdk, templated = raised
    assert type(templated) is type(sdk) and templated.status_code == sdk.status_code == int(outcome)
    assert templated.message == sdk.message and templated.body == sdk.body
    assert f"simulated {outcome} fault" in templated.message


def test_timeouts_and_broken_connections_are_the_sdks_errors():
    failures = iter([None, httpx2.ReadTimeout("slow"), httpx2.ConnectError("refused")])

    def handler(request):
        failure = next(failures)
        if failure is not None:
            raise failure
        return httpx2.Response(200, json=ANSWER)

    client = _client(handler)
    request = build_request("m", MESSAGES, {})
    client.post_chat(request, 5.0, _post_chat).close()
    with pytest.raises(openai.APITimeoutError):
        client.post_chat(request, 5.0, _post_chat)
    with pytest.raises(openai.APIConnectionError) as caught:
        client.post_chat(request, 5.0, _post_chat)
    assert not isinstance(caught.value, openai.APITimeoutError)


def test_a_backends_calls_answer_and_retry_from_the_template(server):
    server.reset()
    backend = OpenAIBackend(BackendConfig(name="s", base_url=server.base_url, model="m", simulated=True,
                                          max_attempts=2, retry_base_s=0.01, timeout_s=5, stream=False))
    first = backend.complete(MESSAGES, max_tokens=3)
    server.enqueue("503")  # the next call's first attempt, sent from the template, fails and is retried
    second = backend.complete(MESSAGES, max_tokens=3)
    assert second.text == first.text and second.attempts == 2
    assert [r.status for r in server.chat_log()] == [200, 503, 200]
    backend.close()


def test_on_an_event_loop_too_streamed_or_not_the_same_bytes_and_errors():
    import asyncio

    from lyra_lab.backends._openai import _apost_chat
    from lyra_lab.backends._request_template import AsyncClient

    seen: list[httpx2.Request] = []
    statuses = iter([200, 200, 200, 200, 200, 429, 429])

    async def handler(request):
        seen.append(request)
        status = next(statuses)
        if status != 200:
            return httpx2.Response(status, json={"error": {"message": "slow down", "type": "rate_limit_error"}})
        return httpx2.Response(200, json=ANSWER)

    async def go():
        http = openai.DefaultAsyncHttpxClient(transport=httpx2.MockTransport(handler))
        client = AsyncClient(openai.AsyncOpenAI(api_key="sk-test", base_url="http://127.0.0.1:9/v1",
                                                max_retries=0, http_client=http), http)
        plain = build_request("m", MESSAGES, {"max_tokens": 4, "extra_headers": {"X-Org": "lab"}})
        streamed = plain.streamed(usage=True)
        through_sdk = []

        async def sdk_post(*args):
            through_sdk.append(args)
            return await _apost_chat(*args)

        for request in (plain, plain, streamed):
            await (await client.post_chat(request, 7.5, sdk_post)).aclose()
        assert len(through_sdk) == 1  # the first request only
        await (await _apost_chat(client.client, streamed, 7.5)).aclose()  # the SDK itself
        await (await _apost_chat(client.client, plain, 7.5)).aclose()
        errors = []
        for send in (lambda: client.post_chat(plain, 7.5, sdk_post), lambda: _apost_chat(client.client, plain, 7.5)):
            with pytest.raises(openai.RateLimitError) as caught:
                await send()
            errors.append(caught.value)
        await client.close()
        return errors

    templated_error, sdk_error = asyncio.run(go())
    first, templated, templated_stream, sdk_stream, sdk_plain, _, _ = seen
    assert _wire(templated) == _wire(sdk_plain) == _wire(first)
    assert _wire(templated_stream) == _wire(sdk_stream)
    assert json.loads(templated_stream.content)["stream"] is True
    assert templated_error.message == sdk_error.message and templated_error.status_code == 429
