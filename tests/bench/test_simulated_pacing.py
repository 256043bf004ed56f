"""The simulated GPU-shaped server answers in the time its spec says, streamed and not (issue 43).

A stand-in for a GPU server must keep its own spec: every token is due at ``latency_s + n /
tokens_per_s`` after the request came in, and the server sleeps until that deadline rather than a
sleep per token (which oversleeps a little every time: 2,000 tokens/s streamed took ~1.8× its spec).
A minimal client (``httpx``, one request at a time) times each request from sending it to the
answer's last byte against a server in its own process. The spec is 300 ms (100 ms to the first
token, 400 tokens at 2,000 tokens/s), long enough that a busy scheduler's few milliseconds (``make
test`` runs files in parallel) are small beside it, and the check is on the median of several
requests, so one late wake-up does not decide it; the 5% figure at the GPU-shaped spec itself (52 ms) is printed by
``benchmarks/simulated_pacing.py``.
"""

from __future__ import annotations

import dataclasses
import statistics
import time

import httpx
import orjson
import pytest

from lyra_lab.bench import GPU_LIKE, ServerProcess

SPEC = dataclasses.replace(GPU_LIKE, latency_s=0.1)
TOKENS = 400
DUE_S = SPEC.latency_s + TOKENS / SPEC.tokens_per_s  # 0.3 s
REQUESTS = 7
PROMPT = " ".join(f"Sentence number {i} says that the weather was fine on day {i}." for i in range(80))
BODY = {"model": SPEC.model, "max_tokens": TOKENS, "messages": [{"role": "user", "content": PROMPT}]}


@pytest.fixture(scope="module")
def server():
    with ServerProcess(SPEC) as process:
        yield process


def _timed(client: httpx.Client, url: str, stream: bool) -> tuple[float, int]:
    """Seconds from sending to the answer's last byte, and the completion tokens the answer reports."""
    started = time.perf_counter()
    if not stream:
        response = client.post(url, json=BODY)
        response.read()
        return time.perf_counter() - started, orjson.loads(response.content)["usage"]["completion_tokens"]
    tokens = 0
    body = {**BODY, "stream": True, "stream_options": {"include_usage": True}}
    with client.stream("POST", url, json=body) as response:
        for line in response.iter_lines():
            if line.startswith("data: {") and '"usage": {' in line:
                tokens = orjson.loads(line[6:])["usage"]["completion_tokens"]
    return time.perf_counter() - started, tokens


@pytest.mark.parametrize("stream", [False, True], ids=["not streamed", "streamed"])
def test_an_answer_takes_what_the_spec_says(server, stream):
    url = server.base_url + "/chat/completions"
    with httpx.Client(timeout=30) as client:
        _timed(client, url, stream)  # the connection and the server's first request
        timed = [_timed(client, url, stream) for _ in range(REQUESTS)]
    assert {n for _, n in timed} == {TOKENS}  # every answer as long as asked (finish "length")
    assert min(t for t, _ in timed) >= DUE_S  # never faster than the spec
    median = statistics.median(t for t, _ in timed)
    assert median <= DUE_S * 1.05, (median, [round(t, 4) for t, _ in timed])
