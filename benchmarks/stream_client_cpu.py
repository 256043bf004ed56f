"""Client CPU per streamed chat request: the openai client's event objects against lyra-lab's parser.

One request at a time against the simulated server in its own process (0 s latency, 48-token
replies, labelled simulated), N requests each way; prints the client's CPU milliseconds and wall
milliseconds per request for:

- ``openai stream``: ``chat.completions.create(stream=True)``, iterating the client's chunk objects
  (what ``OpenAIBackend`` did before ``read_events``);
- ``backend stream``: ``OpenAIBackend.complete`` with ``stream = true`` (the request through the
  openai client, the events decoded by ``read_events``, one ``orjson.loads`` each);
- ``backend no-stream``: ``OpenAIBackend.complete`` with ``stream = false``.

At 16 requests in flight on 2 cores this CPU is what stretches each request past the server's
time (``benchmarks/concurrent_cells.py --server-process`` shows the effect).

    PYTHONPATH=. .venv/bin/python benchmarks/stream_client_cpu.py [--n 200]
"""

from __future__ import annotations

import argparse
import time
from typing import Callable

from concurrent_cells import ServerProcess

from lyra_lab.backends import BackendConfig, OpenAIBackend

MESSAGES = [{"role": "user", "content": "Summarize: the plumber comes on Tuesday and the boiler is fixed. " * 20}]


def per_request(fn: Callable[[], str], n: int) -> tuple[float, float, int]:
    fn()  # warm up (connection, imports)
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(n):
        text = fn()
    return 1000 * (time.process_time() - cpu) / n, 1000 * (time.perf_counter() - wall) / n, len(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="requests per way")
    args = parser.parse_args()
    import openai

    server = ServerProcess(0.0)
    try:
        client = openai.OpenAI(base_url=server.base_url, api_key="not-needed", max_retries=0)

        def openai_stream() -> str:
            parts = []
            with client.chat.completions.create(model="sim", messages=MESSAGES, max_tokens=48, stream=True,
                                                stream_options={"include_usage": True}) as stream:
                for chunk in stream:
                    if chunk.choices and chunk.choices[0].delta.content:
                        parts.append(chunk.choices[0].delta.content)
            return "".join(parts)

        def backend(stream: bool) -> Callable[[], str]:
            b = OpenAIBackend(BackendConfig(name="simulated", base_url=server.base_url, model="sim", simulated=True,
                                            stream=stream, params={"max_tokens": 48}))
            return lambda: b.complete(MESSAGES).text

        print(f"simulated server (SIMULATED) in its own process, 0 s latency, {args.n} requests each")
        print(f"{'client':<20}{'CPU ms/request':>16}{'wall ms/request':>17}{'reply chars':>13}")
        for label, fn in [("openai stream", openai_stream), ("backend stream", backend(True)),
                          ("backend no-stream", backend(False))]:
            cpu, wall, chars = per_request(fn, args.n)
            print(f"{label:<20}{cpu:>16.2f}{wall:>17.2f}{chars:>13}")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
