"""Deadlines that hold: a summarizing grid with 3% hung requests against the same grid fault-free.

The grid is the fault soak's (``tests/experiments/test_soak.py``): synthetic conversations
(seeded generator), ``turn_window`` 4 × (``single_pass``, ``map_reduce``), BM25, no QA, on an
in-process SimulatedServer (labelled simulated), the response cache off so each run pays every
request. The faulty server holds a share of requests (``--hang-rate``, default 3%) for
``--hang-s`` (default 60 s) without answering; the backend's ``timeout_s`` (``--timeout``,
default 2 s) is the per-attempt timeout, while the summarizers keep their own deadlines
(120-300 s) for the whole call. Before deadlines held, a summarizer's deadline replaced the
backend's timeout, so each hung attempt cost the whole hang (issue 26: 365 s against 4 s
fault-free); now it costs ``timeout_s`` plus a backoff (0.5-1 s), and the call is retried.

It prints, for the fault-free run and the run with hangs: wall time, chat requests, hangs,
failed cells; the ratio of the wall times (issue 26's target: at most 3) and the extra wall time
per hang. The rows of the two runs (timing metrics aside) must be equal: every hung call was
retried to an answer.

Measured on 2 cores shared with other work (load average 4-6), 4 conversations × 50 sessions,
973 requests fault-free, 35 of 1,008 hung:

    server latency  max_cells  fault-free  3% hangs  ratio  extra wall per hang
    0.25 s          8          38.4 s      64.0 s    1.66   (cells overlap)
    0.05 s          8          13.1 s      39.5 s    3.03   (cells overlap)
    0.002 s         8           8.3 s      33.6 s    4.06   (cells overlap)
    0.002 s         1          10.9 s     104.9 s    9.61   2.69 s = timeout_s 2 s + backoff

Before and after, the same serial grid of 2 conversations × 20 sessions at 0.002 s, 7 of 215
requests hung for 20 s (``--conversations 2 --sessions 20 --latency 0.002 --max-cells 1 --hang-s
20``): 147.4 s against 3.1 s fault-free on the code before this change (20.62 s extra wall per
hang: the client waited each hang out), 22.0 s against 3.0 s now (2.71 s per hang).

With a cloud-like latency (a quarter second a request, the default here) the hangs cost two
thirds more wall time; with the soak's near-zero latency the grid's own work is so short that 35
hangs of ~2.7 s each dominate it, however they overlap: there the figure that holds is the cost
of one hang, ``timeout_s`` plus a backoff, against the 60 s (or the summarizers' 120-300 s) a
hang cost before.

    PYTHONPATH=. .venv/bin/python benchmarks/deadlines.py [--latency 0.25] [--max-cells 8] [--sessions 50]
"""

from __future__ import annotations

import argparse
import tempfile
import textwrap
import time
from pathlib import Path

import pandas as pd

from lyra_lab.backends import SimulatedServer
from lyra_lab.experiments import ExperimentSpec, run_experiment
from lyra_lab.synthetic import generate_synthetic


def grid_toml(folder: Path, base_url: str, args: argparse.Namespace) -> Path:
    """The soak's grid on ``base_url`` with the backend's ``timeout_s = args.timeout``."""
    months = max(1, args.sessions // 20 + 1)
    corpus = generate_synthetic(0, conversations=args.conversations, months=months, sessions=args.sessions,
                                single_facts=4, updated_facts=1, temporal=2, multi_hop=1, abstention=2)
    corpus_path = corpus.save(folder / "corpus.jsonl")
    backend = f'{{ preset = "simulated", base_url = "{base_url}", timeout_s = {args.timeout} }}'
    text = textwrap.dedent(f"""
        name = "deadlines"
        [corpus]
        path = "{corpus_path}"
        [grid]
        chunkers = [{{ name = "turn_window", max_turns = 4 }}]
        summarizers = [{{ name = "single_pass", max_tokens = 24 }},
                       {{ name = "map_reduce", max_tokens = 16, merge_max_tokens = 24 }}]
        recallers = ["bm25"]
        [run]
        backends = [{backend}]
        embedders = ["hashing"]
        ks = [1, 5]
        max_cells = {args.max_cells}
        workers = {args.workers}
        """)
    path = folder / f"grid-{abs(hash(base_url))}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def run(folder: Path, name: str, args: argparse.Namespace, **server: object) -> tuple[float, pd.DataFrame, dict]:
    with SimulatedServer(latency_s=args.latency, **server) as sim:  # type: ignore[arg-type]
        spec = ExperimentSpec.from_toml(grid_toml(folder, sim.base_url, args))
        started = time.perf_counter()
        df = run_experiment(spec, folder / name, progress=False)
        wall = time.perf_counter() - started
        log = sim.chat_log()
    counts = {"requests": len(log), "hangs": sum(r.outcome == "hang" for r in log),
              "failed_cells": len(df.attrs.get("failed_cells", []))}
    return wall, df, counts


def stable(df: pd.DataFrame) -> pd.DataFrame:
    keep = df[~df["metric"].str.contains("latency")].drop(columns=["cell_id"])
    return keep.sort_values(["pipeline", "conversation_id", "probe_id", "metric"]).reset_index(drop=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=4)
    parser.add_argument("--sessions", type=int, default=50, help="sessions per conversation")
    parser.add_argument("--latency", type=float, default=0.25, help="the server's time to first token (s)")
    parser.add_argument("--hang-rate", type=float, default=0.03)
    parser.add_argument("--hang-s", type=float, default=60.0, help="how long a hung request is held")
    parser.add_argument("--timeout", type=float, default=2.0, help="the backend's timeout_s (per attempt)")
    parser.add_argument("--max-cells", type=int, default=8, help="[run] max_cells: cells in flight at once")
    parser.add_argument("--workers", type=int, default=1, help="[run] workers: windows summarized ahead per cell")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        clean_wall, clean_df, clean = run(folder, "clean", args)
        hung_wall, hung_df, hung = run(folder, "hangs", args, fault_rates={"hang": args.hang_rate},
                                       hang_s=args.hang_s)
    same = stable(clean_df).equals(stable(hung_df))
    print(f"grid: {args.conversations} conversations x {args.sessions} sessions, single_pass and map_reduce, "
          f"server latency {args.latency} s, backend timeout_s {args.timeout} s, max_cells {args.max_cells}, "
          f"workers {args.workers}")
    print(f"fault-free: {clean_wall:7.2f} s wall, {clean['requests']} requests, {clean['failed_cells']} failed cells")
    print(f"{args.hang_rate:.0%} hangs:  {hung_wall:7.2f} s wall, {hung['requests']} requests, {hung['hangs']} hung "
          f"for {args.hang_s:g} s, {hung['failed_cells']} failed cells")
    print(f"ratio: {hung_wall / clean_wall:.2f} (target <= 3); extra wall per hang: "
          f"{(hung_wall - clean_wall) / max(1, hung['hangs']):.2f} s; rows equal apart from timing: {same}")


if __name__ == "__main__":
    main()
