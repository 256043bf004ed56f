"""Does the simulated GPU-shaped server answer in the time its spec says, streamed and not (issue 43)?

A stand-in for a GPU server must keep its own spec, or every streamed figure measured against it is
the stand-in's. The server (``lyra_lab.bench.GPU_LIKE`` unless overridden: 20 ms to first token,
2,000 tokens/s per stream) runs in its own process; a minimal client (``httpx.Client``, one request
at a time, no retries, no records) times each request from sending it to the last byte of its
answer, streamed (to the end of the event stream) and not; the server's own time for each (its
request log: from its first bytes reaching the server to answered) is printed beside it, and, first,
what a request that asks for no answer (``GET /v1/models``) costs the same client on the same cores.
The spec's time for a request is ``latency_s + completion_tokens / tokens_per_s`` (its usage's
completion tokens). It prints, for each way, the median measured time over ``--requests`` requests,
the spec's time, and their ratio; the target is within 5% (ratio 0.95-1.05).

    PYTHONPATH=. .venv/bin/python benchmarks/simulated_pacing.py [--requests 30] [--max-tokens 64]
        [--latency 0.02] [--rate 2000]

Measured figures: docs/performance.md ("The simulated server keeps its spec").
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import httpx
import orjson

from lyra_lab.bench import GPU_LIKE, ServerProcess

# A user message long enough that the extractive reply is cut at max_tokens (finish "length").
PROMPT = " ".join(f"Sentence number {i} says that the weather was fine on day {i}." for i in range(80))


def one(client: httpx.Client, url: str, body: dict, stream: bool) -> tuple[float, int]:
    """One request: (seconds from sending to the answer's last byte, completion tokens)."""
    payload = {**body, "stream": True, "stream_options": {"include_usage": True}} if stream else body
    started = time.perf_counter()
    if not stream:
        response = client.post(url, json=payload)
        response.read()
        ended = time.perf_counter()
        return ended - started, int(orjson.loads(response.content)["usage"]["completion_tokens"])
    tokens = 0
    with client.stream("POST", url, json=payload) as response:
        for line in response.iter_lines():
            if line.startswith("data: {") and '"usage"' in line:
                usage = orjson.loads(line[6:]).get("usage")
                tokens = int(usage["completion_tokens"]) if usage else tokens
    return time.perf_counter() - started, tokens


def main() -> None:
    """Time each way against the spec and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=30, help="requests per way (default 30)")
    parser.add_argument("--max-tokens", type=int, default=64, help="completion tokens per request (default 64)")
    parser.add_argument("--latency", type=float, default=GPU_LIKE.latency_s, help="time to first token, s")
    parser.add_argument("--rate", type=float, default=GPU_LIKE.tokens_per_s, help="tokens/s per stream")
    args = parser.parse_args()
    spec = dataclasses.replace(GPU_LIKE, latency_s=args.latency, tokens_per_s=args.rate)
    body = {"model": spec.model, "max_tokens": args.max_tokens, "messages": [{"role": "user", "content": PROMPT}]}
    print(f"simulated server (own process): {spec.latency_s * 1000:g} ms to first token, "
          f"{spec.tokens_per_s:g} tokens/s, {args.max_tokens} tokens a request, {args.requests} requests a way")
    with ServerProcess(spec) as server, httpx.Client(timeout=30) as client:
        url = server.base_url + "/chat/completions"
        trips = []
        for _ in range(args.requests):  # what any request costs here, the answer aside
            started = time.perf_counter()
            client.get(server.base_url + "/models").read()
            trips.append(time.perf_counter() - started)
        print(f"a GET /v1/models round trip on these cores now: median {statistics.median(trips) * 1000:.1f} ms")
        for stream in (False, True):
            one(client, url, body, stream)  # warm-up: connection, imports
            server.reset()
            timed = [one(client, url, body, stream) for _ in range(args.requests)]
            inside = statistics.median(server.service_times())
            measured = statistics.median(t for t, _ in timed)
            tokens = statistics.median(n for _, n in timed)
            due = spec.latency_s + tokens / spec.tokens_per_s
            p90 = statistics.quantiles([t for t, _ in timed], n=10)[-1]
            print(f"{'streamed' if stream else 'not streamed':>13}: median {measured * 1000:6.1f} ms "
                  f"(p90 {p90 * 1000:6.1f}) vs spec {due * 1000:6.1f} ms for {tokens:g} tokens: "
                  f"ratio {measured / due:.3f} ({'within' if abs(measured / due - 1) <= 0.05 else 'OUTSIDE'} 5%); "
                  f"the server's own median {inside * 1000:.1f} ms")


if __name__ == "__main__":
    main()
