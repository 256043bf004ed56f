"""A 16-cell grid with summarization on the simulated server, serial cells against ``[run] max_cells``.

The grid: 4 synthetic conversations (seeded generator) × 2 chunkers × ``map_reduce`` × keep_raw
true/false = 16 cells, recalled with BM25 (no embedder), no QA.  The backend is an in-process
SimulatedServer with 0.25 s to first token and instant generation (labelled simulated), allowed
16 requests in flight (``max_concurrency = 16``), with the response cache off so every run pays
every request.  For each ``max_cells`` it prints the requests the server saw, the most it served
at once, the wall time of ``run_experiment`` and

    speedup = requests × latency / wall

(1 = strictly one request at a time; the bound is 16, the backend's ``max_concurrency``), and the
process CPU time of the run (harness + in-process server; with 2 cores that CPU time, not the
server's latency, bounds the wall time once many cells are in flight).  ``--latency 0`` shows the
harness alone; ``--no-stream`` shows what parsing one streamed event per token costs.

Measured on 2 cores shared with other work (load ~3-5), 324 requests: max_cells 1 → 55 s
(speedup 1.5), max_cells 16 → 11.5 s (speedup 7.1) streamed, 6.5 s (speedup 12.6) with
``--no-stream``.  At max_cells 16 the server holds 16 requests in flight, but streamed each takes
~0.46 s as the client sees it instead of 0.25 s: the client's streaming (one parsed event per
token, 48 per reply) and the in-process server share the GIL with the harness, ~6 CPU-s per run
against ~3 without streaming.

With the server in its own process (``--server-process``: a cloud's server does not run in the
client's interpreter), at load 0.8, 16 cells: speedup 12.40 not streamed, 8.74 streamed with the
server in this process, 10.97 streamed with it in its own (client CPU 3.42 s against 1.80 s not
streamed: the client's per-event parsing is what is left).

Since the backend parses a stream's events itself (one ``orjson.loads`` each, ``read_events`` in
``backends/_openai_stream.py``) instead of the openai client's per-event model objects (~1.7 ms of
client CPU per 48-token reply against ~6.5 ms), and reads each body to its end so the connection
is reused: at load average ~8.5, 16 cells, server in its own process, streamed speedup 12.09 with
the client's median request 0.260 s (p90 0.287) against the server's 0.25 s (it was 0.347 / 0.453
before, at load ~4); not streamed 12.15, median 0.260.

    PYTHONPATH=. .venv/bin/python benchmarks/concurrent_cells.py [--max-cells 1 16] [--no-stream] [--server-process]
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from lyra_lab.backends import SimulatedServer
from lyra_lab.replay import read_log
from lyra_lab.synthetic import generate_synthetic
from lyra_lab.experiments import ExperimentSpec, RunOptions, run_experiment

LATENCY_S = 0.25
GRID = """
name = "concurrent-cells"
[corpus]
path = "corpus.jsonl"
max_sessions = 6
max_probes = 5
[grid]
chunkers = [{{ name = "turn_window", max_turns = 6 }}, {{ name = "token_budget", max_tokens = 200 }}]
summarizers = [{{ name = "map_reduce", max_tokens = 48, merge_max_tokens = 48 }}]
keep_raw = [true, false]
recallers = ["bm25"]
[run]
backends = [{{ preset = "simulated", base_url = "{url}", max_concurrency = 16, stream = {stream} }}]
embedders = ["none"]
ks = [1, 5]
cache = "off"
max_cells = {max_cells}
"""


def _serve(conn: Any, latency: float) -> None:
    """A child process's loop: a SimulatedServer answering ``reset`` / ``chat_log`` / ``max_serving`` on ``conn``
    until ``stop``."""
    with SimulatedServer(latency_s=latency, default_max_tokens=48) as server:
        answers = {"reset": server.reset, "chat_log": server.chat_log, "max_serving": lambda: server.max_serving}
        conn.send(server.base_url)
        while (command := conn.recv()) != "stop":
            conn.send(answers[command]())


class ServerProcess:
    """The simulated server in a child process, as a cloud's server is not on the client's cores (it still
    shares this machine's): ``base_url``, ``reset()``, ``chat_log()`` and ``max_serving``, asked over a pipe."""

    def __init__(self, latency: float):
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child, latency), daemon=True)
        self._process.start()
        self.base_url = self._conn.recv()

    def _ask(self, command: str) -> Any:
        self._conn.send(command)
        return self._conn.recv()

    def reset(self) -> None:
        self._ask("reset")

    def chat_log(self) -> list[Any]:
        return self._ask("chat_log")

    @property
    def max_serving(self) -> int:
        return self._ask("max_serving")

    def stop(self) -> None:
        self._conn.send("stop")
        self._process.join(timeout=30)


@contextlib.contextmanager
def simulated_server(latency: float, in_process: bool) -> Iterator[Any]:
    """The simulated server, in this process (sharing the client's interpreter) or in a child process."""
    if in_process:
        with SimulatedServer(latency_s=latency, default_max_tokens=48) as server:
            yield server
        return
    server = ServerProcess(latency)
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def simulated_grids(latency: float, stream: bool, in_process: bool = True
                    ) -> Iterator[tuple[Any, Callable[..., ExperimentSpec], Path]]:
    """The simulated server, the synthetic corpus in a temp folder, and ``grid(name, max_cells, extra="")``
    writing ``GRID`` there (plus ``extra`` run keys) and returning its spec; prints the server line."""
    with tempfile.TemporaryDirectory() as tmp, simulated_server(latency, in_process) as server:
        folder = Path(tmp)
        generate_synthetic(0, conversations=4).save(folder / "corpus.jsonl")
        print(f"simulated server (SIMULATED): {latency} s per request, backend max_concurrency 16, cache off, "
              f"{'' if stream else 'not '}streamed, {'in this process' if in_process else 'in its own process'}")

        def grid(name: str, max_cells: int, extra: str = "") -> ExperimentSpec:
            toml = folder / f"grid-{name}.toml"
            text = GRID.format(url=server.base_url, max_cells=max_cells, stream=str(stream).lower())
            toml.write_text(textwrap.dedent(text) + extra, encoding="utf-8")
            return ExperimentSpec.from_toml(toml)

        yield server, grid, folder


def client_latencies(run_dir: Path) -> list[float]:
    """Every LLM call's latency as the client measured it, from the run log."""
    return [float(e["latency_s"]) for e in read_log(run_dir / "log.jsonl") if e.get("event") == "llm_call"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-cells", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--latency", type=float, default=LATENCY_S, help="server seconds per request")
    parser.add_argument("--no-stream", action="store_true",
                        help="non-streamed responses (the client parses one reply instead of one event per token)")
    parser.add_argument("--server-process", action="store_true",
                        help="run the simulated server in its own process (as a cloud's is not in the client's)")
    args = parser.parse_args()
    latency = args.latency
    with simulated_grids(latency, not args.no_stream, not args.server_process) as (server, grid, folder):
        print(f"{'max_cells':>9}{'cells':>7}{'requests':>10}{'peak in flight':>16}{'wall s':>9}{'cpu s':>8}"
              f"{'speedup':>9}{'client p50 s':>14}{'p90 s':>8}")
        for max_cells in args.max_cells:
            spec = grid(str(max_cells), max_cells)
            server.reset()
            started, cpu = time.perf_counter(), time.process_time()
            df = run_experiment(spec, folder / f"run-{max_cells}", RunOptions(resume=False))
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            requests = len(server.chat_log())
            seen = client_latencies(folder / f"run-{max_cells}")
            print(f"{max_cells:>9}{df['cell_id'].nunique():>7}{requests:>10}{server.max_serving:>16}"
                  f"{wall:>9.2f}{cpu:>8.2f}{requests * latency / wall:>9.2f}"
                  f"{np.median(seen):>14.3f}{np.percentile(seen, 90):>8.3f}")
        print(f"client p50/p90: each request's latency as the client timed it (llm_call events of log.jsonl: "
              f"request sent to the last event read), against the server's {latency} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
