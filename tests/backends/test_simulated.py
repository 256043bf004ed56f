"""The simulated OpenAI-compatible server, spoken to over raw HTTP (no lyra-lab client in between)."""

from __future__ import annotations

import json
import re
import threading
import time

import httpx
import numpy as np
import pytest

from lyra_lab.backends import SimulatedServer, SimulatedSpec
from lyra_lab.backends.simulated import Behaviour, count_pieces, extractive_reply

TRANSCRIPT = ("Summarize the conversation below.\n"
              "Alice moved to Lisbon in March. She adopted a grey cat called Miso. "
              "Her sister Ines visits every summer. The rent went up twice this year.")
MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": TRANSCRIPT}]


@pytest.fixture(scope="module")
def shared():
    with SimulatedServer(retry_after_s=0.2) as server:
        yield server


@pytest.fixture
def server(shared):
    shared.reset()
    return shared


def _post(server: SimulatedServer, body: dict, **kw) -> httpx.Response:
    return httpx.post(server.base_url + "/chat/completions", json=body, timeout=10, **kw)


def _sse(response: httpx.Response) -> list[dict | str]:
    out = []
    for line in response.text.splitlines():
        if line.startswith("data: "):
            data = line[len("data: "):]
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


def test_reply_is_made_of_real_sentences_of_the_last_user_message(server):
    body = _post(server, {"model": "m", "messages": MESSAGES, "max_tokens": 200}).json()
    text = body["choices"][0]["message"]["content"]
    sentences = [s for s in re.split(r"(?<=[.!?])\s+|\n+", TRANSCRIPT) if s]
    picked = [s for s in sentences if s in text]
    assert picked and " ".join(picked) == text  # whole sentences, in their original order
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["usage"] == {"prompt_tokens": count_pieces(MESSAGES), "completion_tokens": len(text.split()),
                             "total_tokens": count_pieces(MESSAGES) + len(text.split())}


def test_reply_is_capped_by_max_tokens_and_deterministic_per_seed():
    pieces, finish = extractive_reply(MESSAGES, 5, seed=1)
    assert len(pieces) == 5 and finish == "length"
    assert all(p in TRANSCRIPT.split() for p in pieces)
    assert extractive_reply(MESSAGES, 5, seed=1) == (pieces, finish)
    others = {tuple(extractive_reply(MESSAGES, 5, seed=s)[0]) for s in range(8)}
    assert len(others) > 1  # the seed does choose among sentences


def test_stream_sends_one_chunk_per_token_then_usage_and_done(server):
    plain = _post(server, {"model": "m", "messages": MESSAGES, "max_tokens": 5}).json()
    events = _sse(_post(server, {"model": "m", "messages": MESSAGES, "max_tokens": 5, "stream": True,
                                 "stream_options": {"include_usage": True}}))
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text == plain["choices"][0]["message"]["content"]
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "length"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"] == plain["usage"]


def test_cut_and_malformed_streams_never_finish(server):
    server.enqueue("cut", "malformed")
    body = {"model": "m", "messages": MESSAGES, "stream": True}
    cut = _post(server, body).text
    malformed = _post(server, body).text
    assert "[DONE]" not in cut and '"finish_reason": "stop"' not in cut
    assert "[DONE]" not in malformed
    bad = [line for line in malformed.splitlines() if line.startswith("data: ")][-1]
    with pytest.raises(json.JSONDecodeError):
        json.loads(bad[len("data: "):])


@pytest.mark.parametrize("fault, status",
                         [("429", 429), ("500", 500), ("503", 503), ("529", 529), ("400", 400)])
def test_injected_errors_carry_a_provider_message(server, fault, status):
    server.enqueue(fault)
    response = _post(server, {"model": "m", "messages": MESSAGES})
    assert _post(server, {"model": "m", "messages": MESSAGES}).status_code == 200  # the script is used up
    assert [r.outcome for r in server.log] == [fault, "ok"]
    assert response.status_code == status
    assert response.json()["error"]["message"] == f"simulated {fault} fault (injected)"
    assert response.json()["error"]["type"]
    assert (response.headers.get("retry-after") == "0.2") == (fault == "429")


def test_hang_holds_the_request_until_the_client_gives_up_and_stop_releases_it():
    server = SimulatedServer(hang_s=30).__enter__()
    try:
        server.enqueue("hang")
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(server.base_url + "/chat/completions", json={"model": "m", "messages": MESSAGES},
                       timeout=0.3)
        assert server.log[0].outcome == "hang" and server.log[0].finished is None
    finally:
        began = time.monotonic()
        server.stop()
    assert time.monotonic() - began < 10  # stop() did not wait out the 30 s hang


def test_rate_limit_answers_429_with_retry_after_from_the_token_bucket():
    with SimulatedServer(rate_limit_rps=2.0, rate_limit_burst=1) as server:
        first = _post(server, {"model": "m", "messages": MESSAGES})
        second = _post(server, {"model": "m", "messages": MESSAGES})
    assert first.status_code == 200
    assert second.status_code == 429
    wait = float(second.headers["retry-after"])
    assert 0 < wait <= 0.5  # one token per 0.5 s
    assert server.log[1].outcome == "rate_limited"


def test_max_concurrency_queues_requests_instead_of_refusing_them():
    results: list[int] = []
    with SimulatedServer(max_concurrency=2, latency_s=0.2) as server:
        def call():
            results.append(_post(server, {"model": "m", "messages": MESSAGES}).status_code)

        threads = [threading.Thread(target=call) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        log = server.log
    assert results == [200] * 6
    assert server.max_serving == 2
    # no more than 2 served at any instant, checked from the server's own timestamps
    for rec in log:
        overlapping = [o for o in log if o.started < rec.started < o.finished]
        assert len(overlapping) <= 1


def test_fault_rates_are_seeded_draws():
    spec = SimulatedSpec(fault_rates={"503": 0.3, "hang": 0.1}, seed=7)
    behaviour = Behaviour(spec)
    draws = [behaviour.next_outcome() for _ in range(2000)]
    again = Behaviour(spec)
    assert draws == [again.next_outcome() for _ in range(2000)]
    assert 0.25 < draws.count("503") / 2000 < 0.35
    assert 0.06 < draws.count("hang") / 2000 < 0.14
    assert set(draws) == {"ok", "503", "hang"}


@pytest.mark.parametrize("fields, problem", [
    ({"fault_rates": {"418": 0.1}}, "unknown fault"),
    ({"fault_rates": {"500": 0.7, "503": 0.6}}, "summing"),
    ({"max_concurrency": 0}, "max_concurrency"),
    ({"tokens_per_s": 0}, "tokens_per_s"),
    ({"latency_s": -1}, "latency_s"),
])
def test_spec_rejects_bad_values(fields, problem):
    with pytest.raises(ValueError, match=problem):
        SimulatedSpec(**fields)


def test_enqueue_rejects_unknown_outcomes():
    with pytest.raises(ValueError, match="unknown outcome 'boom'"):
        SimulatedServer().enqueue("ok", "boom")


def test_models_and_embeddings_endpoints():
    with SimulatedServer(model="sim-7b", embedding_dim=32) as server:
        models = httpx.get(server.base_url + "/models", timeout=5).json()
        emb = httpx.post(server.base_url + "/embeddings",
                         json={"model": "e", "input": ["a cat", "a cat", "dog"]}, timeout=5).json()
    assert [m["id"] for m in models["data"]] == ["sim-7b"]
    vectors = np.array([d["embedding"] for d in emb["data"]])
    assert vectors.shape == (3, 32)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert np.allclose(vectors[0], vectors[1]) and not np.allclose(vectors[0], vectors[2])


def test_api_key_check_and_log_keeps_no_header_value():
    with SimulatedServer(api_key="sk-sim-abc") as server:
        denied = _post(server, {"model": "m", "messages": MESSAGES})
        allowed = _post(server, {"model": "m", "messages": MESSAGES},
                        headers={"Authorization": "Bearer sk-sim-abc"})
        log = server.log
    assert denied.status_code == 401 and allowed.status_code == 200
    assert [r.has_auth for r in log] == [False, True]
    assert "sk-sim-abc" not in repr(log)


def test_bad_request_bodies_get_400_with_a_message(server):
    response = _post(server, {"model": "m", "messages": []})
    assert response.status_code == 400
    assert "messages" in response.json()["error"]["message"]


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/embeddings"])
def test_a_client_that_leaves_mid_body_is_recorded_and_no_traceback_is_printed(path, capfd):
    """A worker killed while sending (Ctrl-C on a process executor): the server records it, prints nothing."""
    import socket
    from urllib.parse import urlsplit

    with SimulatedServer() as server:
        where = urlsplit(server.base_url)
        with socket.create_connection((where.hostname, where.port)) as sock:
            sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         "Content-Length: 1000\r\n\r\n{\"model\": ".encode())
        deadline = time.monotonic() + 5
        while not server.chat_log() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        log = server.chat_log()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ClientDisconnect" not in err, err[-1500:]
    if path.endswith("completions"):
        assert [(r.outcome, r.status) for r in log] == [("client_gone", 499)]
