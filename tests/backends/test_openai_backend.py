"""OpenAIBackend against the simulated server: text, usage, timing, cost, params, concurrency."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from lyra_lab import ConfigError
from lyra_lab.backends import (BackendConfig, Completion, OpenAIBackend, SimulatedServer, Usage,
                               token_counter)

TEXT = ("Please summarize. Carol started a pottery class in May. Her first bowl cracked in the kiln. "
        "She plans a trip to Kyoto in autumn.")
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": TEXT}]


@pytest.fixture(scope="module")
def server():
    with SimulatedServer(latency_s=0.02, tokens_per_s=500) as srv:
        yield srv


@pytest.fixture
def sim(server):
    server.reset()
    return server


def _backend(server, **fields) -> OpenAIBackend:
    base = dict(name="simulated", base_url=server.base_url, model="sim-model", simulated=True,
                max_attempts=2, retry_base_s=0.01, timeout_s=5)
    return OpenAIBackend(BackendConfig(**{**base, **fields}))


@pytest.mark.parametrize("stream", [True, False])
def test_completion_carries_text_server_usage_and_labels(sim, stream, call):
    completion = call(_backend(sim, stream=stream), MESSAGES, max_tokens=5)
    (rec,) = sim.chat_log()
    assert isinstance(completion, Completion)
    assert all(word in TEXT.split() for word in completion.text.split())
    assert completion.usage.prompt_tokens == rec.prompt_tokens
    assert completion.usage.completion_tokens == rec.completion_tokens == len(completion.text.split()) == 5
    assert completion.usage.estimated is False and completion.usage.calls == 1
    assert completion.finish_reason == "length"
    assert (completion.backend, completion.model) == ("simulated", "sim-model")
    assert completion.simulated is True and completion.cached is False
    assert completion.latency_s > 0
    assert rec.stream is stream and rec.model == "sim-model" and rec.max_tokens == 5
    if stream:
        assert rec.params["stream_options"] == {"include_usage": True}
        assert completion.ttft_s is not None and 0 < completion.ttft_s <= completion.latency_s
    else:
        assert completion.ttft_s is None


@pytest.mark.parametrize("stream", [True, False])
def test_missing_usage_is_counted_locally_and_flagged(stream):
    with SimulatedServer(include_usage=False) as server:
        completion = _backend(server, stream=stream, model="gpt-4o-mini").complete(MESSAGES)
    count = token_counter("gpt-4o-mini")
    assert completion.usage.estimated is True
    assert completion.usage.completion_tokens == count(completion.text)
    assert completion.usage.prompt_tokens == sum(count(m["content"]) + 3 for m in MESSAGES) + 3


def test_a_given_counter_is_used_for_missing_usage():
    with SimulatedServer(include_usage=False) as server:
        backend = OpenAIBackend(BackendConfig(name="s", base_url=server.base_url, model="m"),
                                counter=lambda text: len(text))
        completion = backend.complete(MESSAGES)
    assert completion.usage.completion_tokens == len(completion.text)


def test_falls_back_when_a_server_rejects_stream_options(call):
    with SimulatedServer(reject_stream_options=True) as server:
        backend = _backend(server)
        first = call(backend, MESSAGES)
        second = call(backend, MESSAGES)
        log = server.chat_log()
    assert [r.status for r in log] == [400, 200, 200]  # rejected once, then never sent again
    assert "stream_options" not in log[1].params and "stream_options" not in log[2].params
    assert first.text == second.text and first.ttft_s is not None
    assert first.usage.estimated and second.usage.estimated  # a stream without usage
    assert first.meta["attempts"] == 1  # the fallback is not a retry


def test_cost_from_explicit_prices(sim):
    completion = _backend(sim, price_in_per_m=2.0, price_out_per_m=8.0).complete(MESSAGES)
    u = completion.usage
    assert u.cost_usd == pytest.approx((u.prompt_tokens * 2.0 + u.completion_tokens * 8.0) / 1e6)
    assert u.cost_usd > 0 and completion.meta["price_known"] is True


def test_cost_from_the_price_table_and_unknown_models_cost_zero(sim):
    priced = _backend(sim, model="gpt-4o-mini").complete(MESSAGES)
    u = priced.usage
    assert u.cost_usd == pytest.approx((u.prompt_tokens * 0.15 + u.completion_tokens * 0.60) / 1e6)
    unknown = _backend(sim, model="my-finetune").complete(MESSAGES)
    assert unknown.usage.cost_usd == 0.0 and unknown.meta["price_known"] is False
    total = priced.usage + unknown.usage
    assert total == Usage(u.prompt_tokens + unknown.usage.prompt_tokens,
                          u.completion_tokens + unknown.usage.completion_tokens, u.cost_usd, calls=2)


def test_default_params_merge_with_call_params_and_extensions_go_in_the_body(sim):
    backend = _backend(sim, params={"temperature": 0, "repeat_penalty": 1.3, "max_tokens": 4})
    backend.complete(MESSAGES, max_tokens=6, top_k=40)
    (rec,) = sim.chat_log()
    assert rec.params["temperature"] == 0
    assert rec.params["repeat_penalty"] == 1.3  # via extra_body, at the top level of the JSON
    assert rec.params["top_k"] == 40
    assert rec.params["max_tokens"] == 6  # the call overrides the default


@pytest.mark.parametrize("params, problem", [({"n": 2}, "n != 1"), ({"stream": False}, "stream")])
def test_params_the_backend_owns_are_refused(sim, params, problem):
    with pytest.raises(ValueError, match=problem):
        _backend(sim).complete(MESSAGES, **params)
    assert sim.chat_log() == []


def test_a_per_call_timeout_is_refused_naming_the_deadline_instead(sim):
    """No caller widens (or replaces) the backend's per-attempt timeout_s; a call is bounded by deadline=."""
    with pytest.raises(ValueError, match="'timeout' is not a call parameter.*timeout_s.*deadline="):
        _backend(sim, timeout_s=30, max_attempts=1).complete(MESSAGES, timeout=0.3)
    assert sim.chat_log() == []


def test_calls_on_one_event_loop_keep_max_concurrency_in_flight_and_stay_in_order():
    import asyncio

    batch = [[{"role": "user", "content": f"Item number {i} is here."}] for i in range(9)]
    with SimulatedServer(latency_s=0.15) as server:
        backend = _backend(server, max_concurrency=3)

        async def all_at_once():
            try:
                return await asyncio.gather(*(backend.acomplete(m) for m in batch))
            finally:
                await backend.aclose()

        results = asyncio.run(all_at_once())
        peak = server.max_serving
    assert peak == 3
    assert [r.text for r in results] == [f"Item number {i} is here." for i in range(9)]


def test_an_event_loops_call_gives_up_at_its_deadline_while_waiting_for_a_slot():
    import asyncio
    import time

    from lyra_lab.backends import BackendError

    with SimulatedServer(latency_s=1.0) as server:
        backend = _backend(server, max_concurrency=1)

        async def second_waits():
            first = asyncio.create_task(backend.acomplete(MESSAGES))
            await asyncio.sleep(0.1)  # the first holds the one slot
            try:
                with pytest.raises(BackendError) as info:
                    await backend.acomplete(MESSAGES, deadline=time.monotonic() + 0.2)
                return info.value, await first
            finally:
                await backend.aclose()

        error, first = asyncio.run(second_waits())
        assert len(server.chat_log()) == 1  # the second never sent a request
    assert error.gave_up == "deadline" and error.attempts == 0 and "concurrency slot" in str(error)
    assert first.text


@pytest.mark.parametrize("stream", [True, False])
def test_threads_sharing_a_backend_keep_max_concurrency_calls_in_flight(stream):
    batch = [[{"role": "user", "content": f"Item number {i} is here."}] for i in range(9)]
    with SimulatedServer(latency_s=0.15) as server:
        backend = _backend(server, max_concurrency=3, stream=stream)
        with ThreadPoolExecutor(max_workers=9) as pool:
            results = list(pool.map(backend.complete, batch))
        peak = server.max_serving
        # a non-streamed call in flight has an HTTP client of its own (``_client_stack``); streamed
        # ones go out from the request loop's client
        clients = len(backend._clients)
        backend.close()
        assert len(backend._clients) == 0
        assert backend.complete(batch[0]).text == "Item number 0 is here."  # new connections after close
    assert 2 <= peak <= 3
    assert clients == 0 if stream else 2 <= clients <= 3
    assert [r.text for r in results] == [f"Item number {i} is here." for i in range(9)]


@pytest.mark.parametrize("fields, problem", [
    ({"base_url": "localhost:8080"}, "base_url"),
    ({"max_concurrency": 0}, "max_concurrency"),
    ({"timeout_s": 0}, "timeout_s"),
    ({"price_in_per_m": 1.0}, "both"),
    ({"max_attempts": 0}, "max_attempts"),
    ({"params": {"stream": True}}, "stream"),
    ({"model": ""}, "model"),
])
def test_config_validation(fields, problem):
    base = dict(name="x", base_url="http://127.0.0.1:1/v1", model="m")
    with pytest.raises(ConfigError, match=problem):
        BackendConfig(**{**base, **fields})


def test_config_from_dict_names_unknown_keys():
    with pytest.raises(ConfigError, match="unknown key 'temprature'"):
        BackendConfig.from_dict({"name": "x", "base_url": "http://h/v1", "model": "m", "temprature": 0})
    with pytest.raises(ConfigError, match="missing key 'model'"):
        BackendConfig.from_dict({"name": "x", "base_url": "http://h/v1"})


def test_describe_is_recordable_and_identity_is_what_determines_answers():
    config = BackendConfig(name="x", base_url="https://user:pw@host.example:8443/v1?key=abc", model="gpt-4o",
                           params={"temperature": 0})
    described = config.describe()
    assert described["base_url"] == "https://host.example:8443/v1"
    assert described["price_known"] is True and described["price_in_per_m"] == 2.5
    assert config.identity() == {"backend": "x", "endpoint": "https://host.example:8443/v1", "model": "gpt-4o",
                                 "params": {"temperature": 0}}
    other_params = BackendConfig(name="x", base_url="https://user:pw@host.example:8443/v1?key=abc",
                                 model="gpt-4o", params={"temperature": 1})
    assert hash(config) == hash(other_params) and config != other_params


@pytest.mark.parametrize("stream", [True, False])
def test_simulated_answers_are_labelled_even_when_the_config_forgot(sim, stream):
    completion = _backend(sim, simulated=False, stream=stream).complete(MESSAGES)
    assert completion.simulated is True


def test_real_servers_answers_are_not_labelled_simulated(sim):
    # a config that does not say simulated, talking to a server that does not mark its answers
    from lyra_lab.backends._openai_stream import Answer

    backend = _backend(sim, simulated=False)
    answer = Answer("x", "stop", 1, 1, 0.1, 0.05, "gpt-4o", fingerprint="fp_abc123")
    assert backend._completion([{"role": "user", "content": "q"}], answer, 1, 0.0, 0.0).simulated is False


def _capturing(monkeypatch, stream: bool) -> list:
    """Every request the backend's openai clients send, answered by a mock transport (no server)."""
    import httpx2
    import openai

    seen: list = []
    if stream:
        events = [{"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": None}]},
                  {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                  {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}]
        content = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        answer = {"headers": {"content-type": "text/event-stream"}, "content": content.encode()}
    else:
        answer = {"json": {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": "ok"}}],
                           "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}}

    def handler(request):
        seen.append(request)
        return httpx2.Response(200, **answer)

    def client(factory):
        return lambda **kw: factory(transport=httpx2.MockTransport(handler), **kw)

    monkeypatch.setattr(openai, "DefaultHttpxClient", client(openai.DefaultHttpxClient))
    monkeypatch.setattr(openai, "DefaultAsyncHttpxClient", client(openai.DefaultAsyncHttpxClient))
    return seen


@pytest.mark.parametrize("stream", [False, True])
def test_a_request_goes_out_as_the_sdks_create_sends_it(monkeypatch, stream):
    """The backend posts its own body (no SDK transform of it): body, URL, query and headers as ``create``'s."""
    import openai

    seen = _capturing(monkeypatch, stream)
    params = {"temperature": 0, "seed": 7, "repeat_penalty": 1.3, "extra_body": {"min_p": 0.1},
              "extra_headers": {"X-Org": "lab"}, "extra_query": {"api-version": "2024-01"}}
    backend = OpenAIBackend(BackendConfig(name="mock", base_url="http://127.0.0.1:9/v1", model="m",
                                          max_attempts=1, stream=stream, params=params))
    completion = backend.complete(MESSAGES, max_tokens=6)
    assert completion.text == "ok" and completion.usage.prompt_tokens == 3
    sdk = openai.OpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1", max_retries=0,
                        http_client=openai.DefaultHttpxClient())
    extra = {"stream": True, "stream_options": {"include_usage": True}} if stream else {}
    with sdk.chat.completions.with_streaming_response.create(
            model="m", messages=MESSAGES, max_tokens=6, temperature=0, seed=7,
            extra_body={"repeat_penalty": 1.3, "min_p": 0.1, **extra},
            extra_headers={"X-Org": "lab"}, extra_query={"api-version": "2024-01"}) as response:
        response.read()
    ours, theirs = seen
    assert json.loads(ours.content) == json.loads(theirs.content)
    assert json.loads(ours.content)["repeat_penalty"] == 1.3  # an extension at the body's top level
    assert (ours.method, ours.url) == (theirs.method, theirs.url)
    assert ours.url.params["api-version"] == "2024-01" and ours.headers["X-Org"] == "lab"
    assert ours.headers["content-type"] == theirs.headers["content-type"] == "application/json"
