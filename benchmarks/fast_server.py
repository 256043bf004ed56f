"""Does lyra-lab keep a fast (GPU-shaped) server busy, and are its latencies the server's? (issue 37)

The simulated server shaped like a GPU serving engine (``lyra_lab.bench.GPU_LIKE``: 20 ms to first
token, 2,000 tokens/s per stream, 256 served at once, no rate limit; labelled simulated) runs in its
own process. In the same run, on the same cores, two clients send the same requests (synthetic
prompts, 64-token answers) at concurrency 1, 8, 16 and 32, streamed and not:

- ``minimal``: no retries, no records: what the cores allow. By default raw asyncio streams, one
  keep-alive connection per request in flight (``benchmarks/minimal_client.py``); with
  ``--yardstick httpx`` the first one, an asyncio loop over ``httpx.AsyncClient``, whose pool costs
  ~1 ms of CPU a request on quiet cores and several on loaded ones (issue 45 item 5);
- ``lyra-lab``: ``lyra_lab.bench.run_sweep`` over ``bench_backend`` (the openai client, the retry
  wrapper, the records), its own ``throughput_rps``.

For each level it prints the ideal requests/s (concurrency / the server's time per request), both
clients' requests/s, their ratio, each client's CPU milliseconds per request (this process only: the
server is in its own), and the median latency each recorded against the server's own time for the
same requests (from its request log). Then a summarizing grid (map_reduce over synthetic
conversations, ``max_cells`` × ``workers`` requests in flight; 8 conversations, 16 cells, ~970
requests) against the same server: its requests/s while it summarizes, against the minimal client
sending the grid's own requests (the bodies the server kept, in the order it got them) at the same
concurrency, the median latency its ``llm_call`` events recorded against the server's, and the mean
number of its requests the server had in flight. Last, the grid's own work: its CPU a call on the
in-process fake backend, where no request is sent (what it adds to each request's client cost).

    PYTHONPATH=. .venv/bin/python benchmarks/fast_server.py [--levels 1 8 16 32] [--repeat 1] [--no-grid]
        [--conversations 8] [--yardstick asyncio|httpx]

Measured figures and their spread: docs/performance.md ("A fast server").
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import statistics
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

import httpx
import orjson

from lyra_lab.bench import GPU_LIKE, ServerProcess, SweepSpec, bench_backend, run_sweep, synthetic_prompts
from minimal_client import replay  # benchmarks/ is on sys.path when run as a script

MAX_TOKENS = 64


class Server(ServerProcess):
    """The GPU-shaped simulated server in its own process (a GPU server is not in the client's interpreter)."""

    def __init__(self) -> None:
        super().__init__(GPU_LIKE, keep_bodies=True)  # the grid's requests are replayed by the minimal client
        self.start()

    def span(self) -> float:
        """First request received to last answered, in the server's clock."""
        served = self.served()
        return max(s.finished for s in served) - min(s.received for s in served)


# ------------------------------------------------------------------ the minimal client
YARDSTICKS = ("asyncio", "httpx")  # the first is the default
YARDSTICK_NAMES = {"asyncio": "raw asyncio streams, a keep-alive connection per request in flight "
                              "(benchmarks/minimal_client.py)",
                   "httpx": "an asyncio loop over httpx.AsyncClient (its pool polls every idle connection "
                            "on each request)"}


async def _httpx_minimal(url: str, bodies: list[dict[str, Any]], concurrency: int, n: int,
                         stream: bool) -> list[float]:
    """The first yardstick (``--yardstick httpx``): an asyncio loop over ``httpx.AsyncClient``.

    Its pool polls every idle connection on each request: ~1 ms of CPU a request on quiet cores,
    3.5-6 on loaded ones (docs/performance.md). One warm-up request first, not counted.
    """
    latencies: list[float] = []
    issued = 0
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        async def one(body: dict[str, Any]) -> None:
            start = time.perf_counter()
            if stream:
                async with client.stream("POST", url, json=body) as response:
                    response.raise_for_status()
                    async for line in response.aiter_lines():
                        if line.startswith("data: ") and line != "data: [DONE]":
                            orjson.loads(line[6:])
            else:
                response = await client.post(url, json=body)
                response.raise_for_status()
                orjson.loads(response.content)
            latencies.append(time.perf_counter() - start)

        async def worker() -> None:
            nonlocal issued
            while issued < n:
                i, issued = issued, issued + 1
                await one(bodies[i % len(bodies)])

        await one(bodies[0])  # warm-up: a connection, the imports
        latencies.clear()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return latencies


def minimal_client(server: Server, bodies: list[dict[str, Any]], concurrency: int, n: int,
                   stream: bool, yardstick: str = YARDSTICKS[0]) -> dict[str, float]:
    """Requests/s, CPU ms per request and median latency of the minimal client; the server's median time.

    ``yardstick``: ``asyncio`` (``minimal_client.replay``: raw asyncio streams, the default) or
    ``httpx`` (``_httpx_minimal``, the first one). ``bodies`` say whether they are streamed.
    """
    server.reset()
    url = server.base_url + "/chat/completions"
    cpu, wall = time.process_time(), time.perf_counter()
    if yardstick == "httpx":
        latencies, errors, skip = asyncio.run(_httpx_minimal(url, bodies, concurrency, n, stream)), 0, 1
    else:
        seen = asyncio.run(replay(url, bodies, concurrency, n))
        latencies, errors, skip = seen.latencies, len(seen.errors), 0  # no warm-up request: none to skip
        if seen.errors:
            print(f"minimal client: {len(seen.errors)} of {n} requests failed, the first: {seen.errors[0][:60]}")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    served = server.service_times()[skip:]
    return {"rps": len(latencies) / server.span(), "cpu_ms": 1000 * cpu / n, "p50": statistics.median(latencies),
            "server_p50": statistics.median(served), "wall": wall, "errors": errors}


def lyra_client(server: Server, backend: Any, prompts: list[Any], concurrency: int, n: int) -> dict[str, float]:
    """The same through ``run_sweep``: its own ``throughput_rps``, CPU per request, median ``service_s``."""
    server.reset()
    spec = SweepSpec(concurrency=(concurrency,), requests=n, max_tokens=MAX_TOKENS, warmup=1)
    cpu = time.process_time()
    result = run_sweep(backend, prompts, spec, progress=False)
    cpu = time.process_time() - cpu
    summary = result.summary().iloc[0]
    served = server.service_times()[1:]
    ok = result.records[result.records["ok"]]
    return {"rps": float(summary["throughput_rps"]), "cpu_ms": 1000 * cpu / n,
            "p50": float(ok["service_s"].median()), "server_p50": statistics.median(served),
            "errors": int(summary["errors"]), "tokens": float(summary["mean_completion_tokens"])}


# ------------------------------------------------------------------ a summarizing grid
GRID = """
name = "fast-server-grid"
[corpus]
path = "{corpus}"
max_sessions = 8
max_probes = 2
[grid]
chunkers = [{{ name = "turn_window", max_turns = 2 }}]
summarizers = [{{ name = "map_reduce", max_tokens = {max_tokens}, merge_max_tokens = {max_tokens} }}]
keep_raw = [true, false]
recallers = ["bm25"]
[run]
backends = [{backend}]
embedders = ["none"]
ks = [1]
cache = "off"
max_cells = {max_cells}
workers = {per_cell}
"""


def grid_run(server: Server, folder: Path, max_cells: int, per_cell: int, stream: bool,
             corpus: str = "corpus.jsonl") -> dict[str, Any]:
    """Run the grid; its requests/s while it summarizes (the server's log), recorded vs served latency.

    ``bodies``: the requests the server answered, in arrival order, for the minimal client to replay.
    """
    from lyra_lab.experiments import ExperimentSpec, RunOptions, run_experiment
    from lyra_lab.runs import read_log

    toml = folder / f"grid-{max_cells}-{per_cell}-{stream}.toml"
    backend = (f'{{ preset = "simulated", base_url = "{server.base_url}", max_concurrency = {max_cells * per_cell}, '
               f'stream = {str(stream).lower()} }}')
    toml.write_text(grid_toml(backend, max_cells, per_cell, corpus), encoding="utf-8")
    out = folder / f"run-{max_cells}-{per_cell}-{stream}"
    server.reset()
    cpu = time.process_time()
    run_experiment(ExperimentSpec.from_toml(toml), out, RunOptions(resume=False))
    cpu = time.process_time() - cpu
    served = server.service_times()
    events = list(read_log(out / "log.jsonl"))
    recorded = [float(e["latency_s"]) for e in events if e.get("event") == "llm_call"]
    return {"rps": len(served) / server.span(), "requests": len(served), "cpu_ms": 1000 * cpu / len(served),
            "p50": statistics.median(recorded), "server_p50": statistics.median(served),
            "in_flight": sum(served) / server.span(), "bodies": server.bodies(),
            "dag": dag_ceiling(events, statistics.median(served), max_cells, max_cells * per_cell)}


def grid_toml(backend: str, max_cells: int, per_cell: int, corpus: str) -> str:
    """The grid's spec with ``backend`` (a TOML value) as its one backend."""
    return textwrap.dedent(GRID.format(backend=backend, max_tokens=MAX_TOKENS, per_cell=per_cell, max_cells=max_cells,
                                       corpus=corpus))


def grid_own_work(folder: Path, max_cells: int, per_cell: int, corpus: str = "corpus.jsonl") -> float:
    """CPU ms a call of the grid's own work: the same grid on the in-process fake backend (no HTTP).

    Run twice (the first warms imports and tokenizers up); the second is timed.
    """
    from lyra_lab.experiments import ExperimentSpec, RunOptions, run_experiment
    from lyra_lab.runs import read_log

    toml = folder / "grid-fake.toml"
    toml.write_text(grid_toml('"fake"', max_cells, per_cell, corpus), encoding="utf-8")
    for attempt in ("warm", "timed"):
        out = folder / f"run-fake-{attempt}"
        cpu = time.process_time()
        run_experiment(ExperimentSpec.from_toml(toml), out, RunOptions(resume=False, progress=False))
        cpu = time.process_time() - cpu
    calls = sum(1 for e in read_log(out / "log.jsonl") if e.get("event") == "llm_call")
    return 1000 * cpu / calls


def dag_ceiling(events: Iterable[Mapping[str, Any]], service_s: float, max_cells: int, in_flight: int,
                map_concurrency: int = 3) -> float:
    """Requests/s of a client that costs nothing running this grid's calls, each taking ``service_s``.

    The grid's calls depend on one another: a window's merge waits for its chunk calls (at most
    ``map_concurrency`` at once), a cell's windows for its start, a cell for a free place among
    ``max_cells``; at most ``in_flight`` calls are out. Replayed from the chunk counts of the run log's
    ``events`` in cell order (every window of a cell starts at once: the grid's ``workers`` ≥ its windows
    per cell).
    """
    windows: dict[str, list[int]] = {}
    for event in events:
        if event.get("event") == "cell_started":
            windows[event["cell_id"]] = []
        elif event.get("event") == "summarize_progress" and event.get("stage") == "load":
            windows[event["cell_id"]].append(int(event["n"]))
    counts = list(windows.values())  # each cell's windows' chunk counts, in cell order
    waiting = list(range(len(counts)))  # cells not started
    todo: dict[tuple[int, int], int] = {}  # (cell, window) -> chunk calls not yet sent
    out: dict[tuple[int, int], int] = {}  # calls of the window in flight
    merging: set[tuple[int, int]] = set()  # windows whose merge call was sent
    ready: list[tuple[int, int]] = []  # calls that may go, in the order they became ready
    ends: list[tuple[float, int, int]] = []  # (when, cell, window) of the calls in flight
    open_cells: dict[int, int] = {}  # cell -> its windows not finished
    now, sent = 0.0, 0

    def send(key: tuple[int, int]) -> None:
        out[key] = out.get(key, 0) + 1
        ready.append(key)

    def open_cell() -> None:
        cell = waiting.pop(0)
        open_cells[cell] = len(counts[cell])
        for w, n in enumerate(counts[cell]):
            todo[cell, w] = n
            for _ in range(min(map_concurrency, n)):
                todo[cell, w] -= 1
                send((cell, w))

    def window_done(cell: int) -> None:
        open_cells[cell] -= 1
        if open_cells[cell] == 0:
            del open_cells[cell]
            if waiting:
                open_cell()

    while waiting and len(open_cells) < max_cells:
        open_cell()
    while ready or ends:
        while ready and len(ends) < in_flight:
            heapq.heappush(ends, (now + service_s, *ready.pop(0)))
            sent += 1
        now, cell, w = heapq.heappop(ends)
        key = (cell, w)
        out[key] -= 1
        if key in merging:
            window_done(cell)
        elif todo[key] > 0:
            todo[key] -= 1
            send(key)
        elif out[key] == 0:
            if counts[cell][w] > 1:
                merging.add(key)
                send(key)
            else:  # one chunk: its summary is the window's, no merge
                window_done(cell)
    return sent / now


def _note(text: str) -> None:
    """Print a footnote wrapped at 100 columns."""
    print(textwrap.fill(text, width=100))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 8, 16, 32])
    parser.add_argument("--per-level", type=int, default=20, help="requests per unit of concurrency (min 32)")
    parser.add_argument("--repeat", type=int, default=1, help="measure every level this many times")
    parser.add_argument("--no-grid", action="store_true", help="skip the summarizing grid")
    parser.add_argument("--conversations", type=int, default=8,
                        help="synthetic conversations the grid summarizes (two cells each)")
    parser.add_argument("--yardstick", choices=YARDSTICKS, default=YARDSTICKS[0],
                        help="the minimal client: raw asyncio streams (benchmarks/minimal_client.py, the "
                             "default) or the first one, an asyncio loop over httpx.AsyncClient")
    args = parser.parse_args()
    yardstick = args.yardstick
    prompts = synthetic_prompts(32, prompt_tokens=300, seed=0)
    server = Server()
    per_request_s = GPU_LIKE.latency_s + MAX_TOKENS / float(GPU_LIKE.tokens_per_s or 1)
    _note(f"GPU-shaped simulated server (SIMULATED) in its own process: {GPU_LIKE.latency_s * 1000:g} ms to "
          f"first token, {GPU_LIKE.tokens_per_s:g} tokens/s per stream, {GPU_LIKE.max_concurrency} served at "
          f"once; {MAX_TOKENS}-token answers, {len(prompts)} synthetic prompts")
    other = [y for y in YARDSTICKS if y != yardstick][0]
    _note(f"minimal client (yardstick): {YARDSTICK_NAMES[yardstick]}; the other: --yardstick {other} "
          f"({YARDSTICK_NAMES[other]})")
    try:
        print(f"{'level':>12}{'ideal':>7}{'minimal':>8}{'lyra':>7}{'ratio':>6}{'cpu min':>8}{'cpu lyra':>9}"
              f"{'p50 min':>8}{'p50 lyra':>9}{'server':>7}{'err':>8}")
        for stream in (False, True):
            backend = bench_backend({"preset": "simulated/simulated-gpu", "base_url": server.base_url},
                                    max(args.levels), stream=stream)
            bodies = [{"model": "simulated-gpu", "messages": list(p.messages), "max_tokens": MAX_TOKENS,
                       **({"stream": True, "stream_options": {"include_usage": True}} if stream else {})}
                      for p in prompts]
            for level in args.levels:
                n = max(32, args.per_level * level)
                for _ in range(args.repeat):
                    mini = minimal_client(server, bodies, level, n, stream, yardstick)
                    lyra = lyra_client(server, backend, prompts, level, n)
                    ideal = level / (GPU_LIKE.latency_s + lyra["tokens"] / float(GPU_LIKE.tokens_per_s or 1))
                    name = f"{level}{', streamed' if stream else ''}"
                    errors = f"{mini['errors']:g}/{lyra['errors']}"
                    print(f"{name:>12}{ideal:>7.1f}{mini['rps']:>8.1f}{lyra['rps']:>7.1f}"
                          f"{lyra['rps'] / mini['rps']:>6.2f}{mini['cpu_ms']:>8.2f}{lyra['cpu_ms']:>9.2f}"
                          f"{1000 * mini['p50']:>8.1f}{1000 * lyra['p50']:>9.1f}"
                          f"{1000 * lyra['server_p50']:>7.1f}{errors:>8}", flush=True)
        _note(f"(requests/s: answered requests over the span the server saw them (minimal) / bench's "
              f"throughput_rps (lyra); ideal = concurrency / {per_request_s * 1000:.0f} ms; cpu: this "
              "process's CPU ms per request; p50: median latency ms each client recorded, lyra-lab's "
              "service_s; server: the server's own median ms for lyra-lab's requests; err: failed "
              "requests, minimal/lyra)")
        if not args.no_grid:
            with tempfile.TemporaryDirectory() as tmp:
                grid_table(server, Path(tmp), args.conversations, args.repeat, yardstick)
    finally:
        server.stop()
    return 0


def grid_table(server: Server, folder: Path, conversations: int, repeat: int, yardstick: str) -> None:
    """The summarizing grid at 1 x 1 and 4 x 8, streamed and not, each against the minimal client."""
    from lyra_lab.synthetic import generate_synthetic

    generate_synthetic(0, conversations=conversations).save(folder / "corpus.jsonl")
    generate_synthetic(0, conversations=1).save(folder / "one.jsonl")  # one at a time: 2 cells
    print()
    _note(f"summarizing grid (map_reduce, bm25, no QA; {2 * conversations} cells, 2 at 1 x 1), same server, "
          f"minimal client: {yardstick}")
    print(f"{'in flight':>16}{'requests':>9}{'grid':>7}{'minimal':>8}{'ratio':>6}{'cpu':>7}{'rows p50':>9}"
          f"{'server':>7}{'saw':>6}{'allow':>7}{'err':>5}")
    for stream in (False, True):
        for max_cells, per_cell in ((1, 1), (4, 8)):
            inflight = max_cells * per_cell
            pairs = []
            for _ in range(repeat):
                grid = grid_run(server, folder, max_cells, per_cell, stream,
                                "one.jsonl" if inflight == 1 else "corpus.jsonl")
                # the same requests, in the order the server got them, at the same concurrency
                mini = minimal_client(server, grid["bodies"], inflight, grid["requests"], stream, yardstick)
                name = f"{max_cells} x {per_cell}{', streamed' if stream else ''}"
                print(f"{name:>16}{grid['requests']:>9}{grid['rps']:>7.1f}{mini['rps']:>8.1f}"
                      f"{grid['rps'] / mini['rps']:>6.2f}{grid['cpu_ms']:>7.2f}{1000 * grid['p50']:>9.1f}"
                      f"{1000 * grid['server_p50']:>7.1f}{grid['in_flight']:>6.1f}{grid['dag']:>7.1f}"
                      f"{mini['errors']:>5g}", flush=True)
                pairs.append((grid["rps"], mini["rps"]))
            if repeat > 1:  # one run's minimal client varies most: the medians' ratio
                grid_rps, mini_rps = (statistics.median(p[i] for p in pairs) for i in (0, 1))
                ratios = sorted(g / m for g, m in pairs)
                print(f"{'median of ' + str(repeat):>16}{'':>9}{grid_rps:>7.1f}{mini_rps:>8.1f}"
                      f"{grid_rps / mini_rps:>6.2f}  (runs {ratios[0]:.2f}-{ratios[-1]:.2f})", flush=True)
    own = grid_own_work(folder, 4, 8)
    print(f"the grid's own work (4 x 8 on the in-process fake backend, no HTTP): {own:.2f} ms of CPU a call")
    _note("(in flight: max_cells x workers; requests: the grid's chat requests; grid: their requests/s "
          "over the span the server saw them; minimal: the minimal client sending the grid's own requests "
          "at the same concurrency; cpu: the grid process's CPU ms a request; rows p50: median latency_s "
          "(ms) of the run log's llm_call events; server: the server's own median ms; saw: the grid's mean "
          "requests in flight at the server over the span; allow: the requests/s of a client that costs "
          "nothing running the grid's dependent calls, each taking the server's p50 (dag_ceiling); err: "
          "the minimal client's failed requests)")


if __name__ == "__main__":
    raise SystemExit(main())
