"""The 16-cell grid of ``concurrent_cells.py`` on each executor: serial, threads, and Ray tasks on a local Ray.

Same grid, server and figure as ``concurrent_cells.py`` (4 synthetic conversations × 2 chunkers ×
``map_reduce`` × keep_raw = 16 cells, BM25, no QA; an in-process SimulatedServer with 0.25 s per
request, labelled simulated, backend ``max_concurrency = 16``, cache off), run once per
``EXECUTOR:MAX_CELLS``:

    speedup = requests × latency / wall     (1 = one request at a time)

For Ray the local instance (``max_cells`` CPUs, 127.0.0.1, no dashboard) is started before the clock
and its start-up printed apart (``ray start s``): a cluster outlives many runs.  Its worker processes
start inside the timed run (each imports lyra-lab); the backend's ``max_concurrency`` bounds them
together (lock files).  On one machine Ray pays
process start-up, pickling and a result round trip per cell for nothing the threads executor lacks;
it is there for grids that outgrow one machine.

Measured on 2 cores shared with other work (load 5-15), 324 requests, not streamed: serial 53.6 s
(speedup 1.51), threads with max_cells 16 6.5 s (12.45), Ray with 2 CPUs 35.9 s (2.26; Ray's
start 33.2 s apart), Ray with 16 CPUs 85.7 s (0.95; start 29.3 s; 16 worker processes each
importing lyra-lab on 2 cores; the server saw at most 16 requests in flight, the backend's bound).

    PYTHONPATH=. .venv/bin/python benchmarks/ray_cells.py [--runs serial:1 threads:16 ray:2 ray:16]
"""

from __future__ import annotations

import argparse
import logging
import time

from concurrent_cells import LATENCY_S, simulated_grids  # the same grid (benchmarks/ is on sys.path when run as a script)

from lyra_lab.experiments import RunOptions, run_experiment


def start_ray(cpus: int) -> float:
    """Start a local Ray as the runner would (127.0.0.1, no dashboard); return the seconds it took."""
    from lyra_lab.experiments.executors._ray import connect  # the runner's own start-up, so the figure is its

    started = time.perf_counter()
    connect(None, cpus)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", default=["serial:1", "threads:16", "ray:2", "ray:16"],
                        help="EXECUTOR:MAX_CELLS pairs, run in this order")
    parser.add_argument("--latency", type=float, default=LATENCY_S, help="server seconds per request")
    parser.add_argument("--no-stream", action="store_true", help="non-streamed responses")
    args = parser.parse_args()
    logging.getLogger("ray").setLevel(logging.ERROR)
    with simulated_grids(args.latency, not args.no_stream) as (server, grid, folder):
        print(f"{'executor':>9}{'max_cells':>10}{'cells':>7}{'requests':>10}{'peak in flight':>16}{'ray start s':>12}"
              f"{'wall s':>9}{'speedup':>9}")
        for run in args.runs:
            executor, _, max_cells = run.partition(":")
            name = f"{executor}-{max_cells}"
            spec = grid(name, int(max_cells), f'executor = "{executor}"\n')
            ray_start = start_ray(int(max_cells)) if executor == "ray" else None
            server.reset()
            started = time.perf_counter()
            try:
                df = run_experiment(spec, folder / f"run-{name}", RunOptions(resume=False))
            finally:
                if executor == "ray":
                    import ray

                    ray.shutdown()
            wall = time.perf_counter() - started
            requests = len(server.chat_log())
            start = f"{ray_start:.1f}" if ray_start is not None else "-"
            print(f"{executor:>9}{max_cells:>10}{df['cell_id'].nunique():>7}{requests:>10}{server.max_serving:>16}"
                  f"{start:>12}{wall:>9.2f}{requests * args.latency / wall:>9.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
