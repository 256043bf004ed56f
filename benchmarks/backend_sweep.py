"""Throughput of the simulated cloud-like backend vs concurrency, with and without its rate limit.

    .venv/bin/python benchmarks/backend_sweep.py [--requests 24] [--concurrency 1,2,4,8,16]

Prints one row per level for two simulated servers that differ only in the
rate limit (5 req/s vs none), so the cost of 429s and retries is visible next
to the pure concurrency limit (8 served at once). Everything here is simulated.
For a real backend use ``lyra-lab bench --backend <preset>``.
"""

from __future__ import annotations

import argparse
import logging

import pandas as pd

from lyra_lab.bench import (SweepSpec, bench_backend, cloud_like_server, combine, run_sweep, summarize,
                            synthetic_prompts)

COLUMNS = ["label", "level", "ok", "errors_by_status", "mean_attempts", "throughput_rps", "latency_p50_s",
           "latency_p95_s"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=24)
    parser.add_argument("--concurrency", default="1,2,4,8,16")
    args = parser.parse_args()
    levels = tuple(int(c) for c in args.concurrency.split(","))
    logging.getLogger("lyra_lab.backends").setLevel(logging.ERROR)  # retries are in the records
    prompts = synthetic_prompts(args.requests, prompt_tokens=300)
    spec = SweepSpec(concurrency=levels, requests=args.requests, max_tokens=64)
    results = []
    for name, overrides in (("rate-limited", {}), ("no-rate-limit", {"rate_limit_rps": None})):
        with cloud_like_server(model=f"cloud-{name}", **overrides) as server:
            backend = bench_backend({"preset": f"simulated/cloud-{name}", "base_url": server.base_url},
                                    max(levels))
            results.append(run_sweep(backend, prompts, spec))
    table = summarize(combine(results))[COLUMNS]
    table["level"] = table["level"].map("{:g}".format)
    with pd.option_context("display.width", 200):
        print(table.to_string(index=False, float_format="%.3f"))


if __name__ == "__main__":
    main()
