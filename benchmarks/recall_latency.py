"""Recall latency at memory scale: BM25 add-then-query, exact dense vs the scan limit, HNSW (``dense_ann``).

Prints a table; asserts nothing.  Sections (each runs at every size given to it):

* ``bm25``: add one entry, then query, through the ``bm25`` recaller (whose
  index appends postings instead of rebuilding) — median of 10.
* ``dense``: a warm ``dense`` query vs the *scan limit*, a bare ``M @ q`` over
  a contiguous float32 matrix plus ``argpartition``.
* ``ann``: ``dense_ann`` build time, p50/p95 query and recall@10 against exact.

Vectors are synthetic, 384-d unit vectors with cluster structure (one centre
per 100 rows, Gaussian noise of 0.06 per coordinate around it, renormalized;
queries drawn the same way), served by a table embedder so the timings hold
no embedding cost.  BM25 texts are 12 words from a 25-word list plus a unique
word per entry.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/recall_latency.py \\
        [--bm25 2000 100000] [--dense 2000 100000 1000000] [--ann 100000 1000000] [--queries 200]

Library choice for ``dense_ann`` (100k × 384 clustered, 1 thread, M=16,
ef_construction=100): see the README of issue 9 / the commit message for the
measured hnswlib vs usearch vs faiss HNSW figures.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import UTC, datetime, timedelta

import numpy as np

from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import Query, RECALLERS, dense_index

WORDS = ["cat", "dog", "Lisbon", "hospital", "nurse", "cello", "marathon", "risotto", "sister", "job", "Monday", "trip", "flight", "weather", "garden", "book", "movie", "birthday", "cake", "piano", "school", "exam", "coffee", "train"]
DIM = 384
T0 = datetime(2023, 5, 8, tzinfo=UTC)


class TableEmbedder:
    """Passages ``"v<i>"`` embed to row ``i`` of a fixed matrix; a query ``"q<j>"`` to row ``j`` of another."""

    def __init__(self, vectors: np.ndarray, queries: np.ndarray):
        self.name, self.dim = f"table-{len(vectors)}", vectors.shape[1]
        self.vectors, self.queries = vectors, queries

    def embed(self, texts, kind="passage"):
        table = self.queries if kind == "query" else self.vectors
        return table[[int(t[1:]) for t in texts]]


def clustered(n: int, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    out = np.empty((n, DIM), dtype=np.float32)
    for s in range(0, n, 100_000):  # in blocks, to keep the noise matrix small at 1M
        m = min(100_000, n - s)
        block = centres[rng.integers(0, len(centres), m)] + rng.standard_normal((m, DIM), dtype=np.float32) * 0.06
        out[s:s + m] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def vectors_and_queries(n: int, n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    centres = rng.standard_normal((max(10, n // 100), DIM), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    return clustered(n, rng, centres), clustered(n_queries, rng, centres)


def entry(i: int, text: str) -> MemoryEntry:
    t = T0 + timedelta(minutes=17 * i)
    return MemoryEntry(f"e{i}", "c", "turn", text, (f"t{i}",), (f"s{i // 20}",), t, t)


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def bm25_rows(n: int) -> list[tuple[str, ...]]:
    store = MemoryStore(entry(i, "user: turn about " + " ".join(WORDS[(i * 7 + j * 3) % len(WORDS)]
                                                                for j in range(12)) + f" w{i}")
                        for i in range(n))
    recaller = RECALLERS.build("bm25")
    import bm25s  # noqa: F401  (its import, ~0.4 s, is not the index build)

    start = time.perf_counter()
    recaller.recall(store, Query("cello lesson with my sister", "c"), 10)
    build = time.perf_counter() - start
    times = []
    for j in range(10):
        start = time.perf_counter()
        store.add(entry(n + j, f"user: a new note about the garden w{n + j}"))
        recaller.recall(store, Query("cello lesson with my sister", "c"), 10)
        times.append(time.perf_counter() - start)
    return [("bm25", f"{n:,}", "index build + first query", ms(build)),
            ("bm25", f"{n:,}", "add 1 entry + query (median)", ms(statistics.median(times)))]


def dense_rows(n: int, n_queries: int) -> list[tuple[str, ...]]:
    vectors, queries = vectors_and_queries(n, n_queries)
    embedder = TableEmbedder(vectors, queries)
    store = MemoryStore(entry(i, f"v{i}") for i in range(n))
    recaller = RECALLERS.build("dense")
    dense_index(store, embedder, "c")  # build outside the timing
    exact, scan = [], []
    matrix = np.ascontiguousarray(vectors)
    for j in range(n_queries):
        start = time.perf_counter()
        recaller.recall(store, Query(f"q{j}", "c", embedder=embedder), 10)
        exact.append(time.perf_counter() - start)
        start = time.perf_counter()
        scores = matrix @ queries[j]
        np.argpartition(scores, n - 10)[n - 10:]
        scan.append(time.perf_counter() - start)
    e, s = statistics.median(exact), statistics.median(scan)
    return [("dense", f"{n:,}", "scan limit M@q + argpartition (median)", ms(s)),
            ("dense", f"{n:,}", "dense recall, warm (median)", f"{ms(e)} ({e / s:.2f}x scan)")]


def ann_rows(n: int, n_queries: int, ef_searches: list[int]) -> list[tuple[str, ...]]:
    from lyra_lab.recall import ann_index  # here, so --ann with no sizes runs on older checkouts

    vectors, queries = vectors_and_queries(n, n_queries)
    embedder = TableEmbedder(vectors, queries)
    store = MemoryStore(entry(i, f"v{i}") for i in range(n))
    start = time.perf_counter()
    index = ann_index(store, embedder, "c")
    build = time.perf_counter() - start
    rows = [("dense_ann", f"{n:,}", "build (1 thread, M=16, ef_construction=100)",
             f"{build:.1f} s ({len(index):,} entries)")]
    truths = [{f"e{i}" for i in np.argpartition(vectors @ q, n - 10)[n - 10:]} for q in queries]
    for ef in ef_searches:
        recaller = RECALLERS.build({"name": "dense_ann", "ef_search": ef})
        times, found = [], 0
        for j in range(n_queries):
            start = time.perf_counter()
            hits = recaller.recall(store, Query(f"q{j}", "c", embedder=embedder), 10)
            times.append(time.perf_counter() - start)
            found += len(truths[j] & {h.entry.id for h in hits})
        p50, p95 = np.percentile(times, [50, 95])
        rows += [("dense_ann", f"{n:,}", f"ef_search={ef}: query p50 / p95", f"{ms(p50)} / {ms(p95)}"),
                 ("dense_ann", f"{n:,}", f"ef_search={ef}: recall@10 vs exact",
                  f"{found / (10 * n_queries):.3f}")]
    start = time.perf_counter()
    store.add(entry(n, "v0"))
    recaller.recall(store, Query("q0", "c", embedder=embedder), 10)
    rows.append(("dense_ann", f"{n:,}", "add 1 entry + query", ms(time.perf_counter() - start)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bm25", type=int, nargs="*", default=[2000, 100_000], metavar="N")
    parser.add_argument("--dense", type=int, nargs="*", default=[2000, 100_000, 1_000_000], metavar="N")
    parser.add_argument("--ann", type=int, nargs="*", default=[100_000, 1_000_000], metavar="N")
    parser.add_argument("--ef-search", type=int, nargs="*", default=[32, 64, 128], metavar="EF")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rows = [("section", "entries", "measure", "value")]
    for n in args.bm25:
        rows += bm25_rows(n)
    for n in args.dense:
        rows += dense_rows(n, args.queries)
    for n in args.ann:
        rows += ann_rows(n, args.queries, args.ef_search)
    widths = [max(len(r[c]) for r in rows) for c in range(4)]
    for r in rows:
        print(" | ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)))


if __name__ == "__main__":
    main()
