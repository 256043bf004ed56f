"""The OpenAI-compatible endpoint mem0 talks to, over real HTTP on 127.0.0.1, with fakes behind it."""

from __future__ import annotations

import httpx
import numpy as np

from lyra_lab.backends import FakeLLM, HashingEmbedder
from lyra_lab.systems import OpenAIEndpoint


def test_a_chat_call_goes_to_the_backend_and_is_counted():
    with OpenAIEndpoint(FakeLLM(outputs=['{"facts": []}', "not JSON"]), None) as endpoint:
        url = f"{endpoint.base_url}/chat/completions"
        json_wanted = {"model": "m", "messages": [{"role": "user", "content": "hi"}],
                       "response_format": {"type": "json_object"}}
        first = httpx.post(url, json=json_wanted)
        second = httpx.post(url, json=json_wanted)
        tally = endpoint.tally()
    assert first.status_code == second.status_code == 200
    assert [r.json()["choices"][0]["message"]["content"] for r in (first, second)] == ['{"facts": []}', "not JSON"]
    assert tally.usage.calls == 2 and tally.bad_outputs == 1 and tally.failed_calls == 0


def test_a_malformed_request_is_a_400_with_one_line_and_nothing_is_called():
    with OpenAIEndpoint(FakeLLM(outputs=["x"]), None) as endpoint:
        url = f"{endpoint.base_url}/chat/completions"
        not_objects = httpx.post(url, json={"model": "m", "messages": ["hi"]})
        not_an_object = httpx.post(url, json=["hi"])
        tally = endpoint.tally()
    assert not_objects.status_code == 400
    assert not_objects.json()["error"]["message"] == "messages: expected a list of objects"
    assert not_an_object.status_code == 400
    assert not_an_object.json()["error"]["message"] == "the request body is not a JSON object"
    assert tally.usage.calls == 0


def test_embeddings_are_the_embedders_as_passages_or_as_queries():
    embedder = HashingEmbedder()
    with OpenAIEndpoint(None, embedder) as endpoint:
        url = f"{endpoint.base_url}/embeddings"
        passages = httpx.post(url, json={"model": "e", "input": ["a dog", "a cat"]}).json()
        query = httpx.post(url, json={"model": "e:query", "input": "a dog"}).json()
        no_llm = httpx.post(f"{endpoint.base_url}/chat/completions", json={"messages": []})
        tally = endpoint.tally()
    got = np.array([d["embedding"] for d in passages["data"]])
    assert np.allclose(got, embedder.embed(["a dog", "a cat"], kind="passage"))
    assert np.allclose(query["data"][0]["embedding"], embedder.embed(["a dog"], kind="query")[0])
    assert no_llm.status_code == 400 and "serves no LLM" in no_llm.json()["error"]["message"]
    assert tally.embed_calls == 2


class _Refusing:
    """A backend that fails every call with ``status`` (what the provider answered, after retries)."""

    name, model = "refusing", "m"

    def __init__(self, status: int):
        self.status = status

    def complete(self, messages, **params):
        from lyra_lab.backends import BackendError

        raise BackendError("refusing", "the request exceeds the available context size", status=self.status)


def test_a_refused_call_is_counted_apart_from_one_that_may_pass():
    counts = {}
    for status in (400, 503):
        with OpenAIEndpoint(_Refusing(status), None) as endpoint:
            answer = httpx.post(f"{endpoint.base_url}/chat/completions",
                                json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
            counts[status] = endpoint.tally()
        assert answer.status_code == 400
    assert counts[400].failed_calls == counts[400].refused_calls == 1  # refused outright: it would recur
    assert counts[503].failed_calls == 1 and counts[503].refused_calls == 0  # may pass next time
