"""Backend throughput benchmark: how many requests per second, at what latency, under what load.

Sweep concurrency (closed loop) and/or offered rate (open loop) against one
backend on fixed, seeded prompts; get one record per request, per-level
statistics, plots, and a result folder that reloads tomorrow::

    with cloud_like_server() as server:
        backend = bench_backend({"preset": "simulated/simulated-cloud", "base_url": server.base_url}, 8)
        result = run_sweep(backend, synthetic_prompts(16), SweepSpec(concurrency=(1, 2, 4, 8)))
    result.summary()
    result.save("runs/bench/simulated")
"""

from lyra_lab.bench._backend import CLOUD_LIKE, GPU_LIKE, bench_backend, cloud_like_server, gpu_like_server
from lyra_lab.bench._plots import plot_latency, plot_sweep, plot_throughput, plot_tradeoff
from lyra_lab.bench._prompts import BenchPrompt, corpus_prompts, prompts_sha256, synthetic_prompts
from lyra_lab.bench._results import COLUMNS, BenchResult, combine, load_result
from lyra_lab.bench._server_process import Served, ServerProcess
from lyra_lab.bench._serving_metrics import SLO_METRICS, chunk_metrics, goodput, parse_slo, tpot
from lyra_lab.bench._stats import SUMMARY_COLUMNS, error_counts, percentile, summarize
from lyra_lab.bench._sweep import ARRIVALS, LevelDone, SweepSpec, backend_label, run_sweep

__all__ = [
    "ARRIVALS",
    "CLOUD_LIKE",
    "COLUMNS",
    "GPU_LIKE",
    "LevelDone",
    "SLO_METRICS",
    "SUMMARY_COLUMNS",
    "Served",
    "ServerProcess",
    "BenchPrompt",
    "BenchResult",
    "SweepSpec",
    "backend_label",
    "bench_backend",
    "chunk_metrics",
    "cloud_like_server",
    "combine",
    "corpus_prompts",
    "error_counts",
    "goodput",
    "gpu_like_server",
    "load_result",
    "parse_slo",
    "percentile",
    "plot_latency",
    "plot_sweep",
    "plot_throughput",
    "plot_tradeoff",
    "prompts_sha256",
    "run_sweep",
    "summarize",
    "synthetic_prompts",
    "tpot",
]
