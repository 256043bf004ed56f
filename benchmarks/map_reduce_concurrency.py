"""Map-reduce wall time against its concurrency bound, on the simulated server.

A LoCoMo conversation (or a synthetic one if the dataset is absent) is cut
into token_budget chunks and summarized with ``map_reduce`` at several
``max_concurrency`` values against a simulated OpenAI-compatible server with
fixed latency and generation rate (labelled simulated).  Prints wall time,
calls, and the most requests the server saw in flight (must not exceed the bound).

    .venv/bin/python benchmarks/map_reduce_concurrency.py
"""

from __future__ import annotations

import time

from lyra_lab import datasets
from lyra_lab.backends import SimulatedServer
from lyra_lab.backends._presets import make_backend
from lyra_lab.chunking import TokenBudgetChunker
from lyra_lab.corpus import load
from lyra_lab.summarize import MapReduceSummarizer, SinglePassSummarizer

LOCOMO = datasets.find("locomo") or datasets.installed_path("locomo")  # `lyra-lab datasets get locomo` installs it


def main() -> int:
    turns = list(load(LOCOMO).conversations[0].turns())[:200]
    chunks = TokenBudgetChunker(max_tokens=1000).chunk(turns)
    print(f"{len(turns)} LoCoMo turns → {len(chunks)} chunks of ≤1000 tokens; simulated server: "
          "0.3 s to first token, 200 tokens/s, 64-token replies (SIMULATED)")
    print(f"{'summarizer':<28}{'wall s':>8}{'calls':>7}{'peak in flight':>16}")
    with SimulatedServer(latency_s=0.3, tokens_per_s=200.0, default_max_tokens=64) as server:
        backend = make_backend({"preset": "simulated", "base_url": server.base_url})
        runs = [("single_pass", SinglePassSummarizer(max_tokens=64))] + [
            (f"map_reduce(max_concurrency={c})", MapReduceSummarizer(max_concurrency=c, max_tokens=64,
                                                                     merge_max_tokens=64))
            for c in (1, 2, 4, 8)]
        for label, summarizer in runs:
            server.reset()
            started = time.perf_counter()
            summary = summarizer.summarize(chunks, backend)
            wall = time.perf_counter() - started
            print(f"{label:<28}{wall:>8.2f}{len(summary.calls):>7}{server.max_serving:>16}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
