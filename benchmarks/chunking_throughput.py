"""How fast each chunker splits real conversations, and what chunks it makes.

Runs every registered chunker (default parameters) over the LoCoMo-10
conversations and prints, per chunker: conversations, chunks, mean/max chunk
tokens (o200k), characters per second, and adaptive's decisions.

    .venv/bin/python benchmarks/chunking_throughput.py [path/to/locomo10.json]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from lyra_lab import datasets
from lyra_lab.backends import token_counter
from lyra_lab.chunking import CHUNKERS, AdaptiveChunker, render_turns
from lyra_lab.corpus import load

DEFAULT = datasets.find("locomo") or datasets.installed_path("locomo")  # `lyra-lab datasets get locomo` installs it


def main(path: Path) -> int:
    if not path.exists():
        print(f"no dataset at {path}; pass the path of locomo10.json", file=sys.stderr)
        return 2
    conversations = [list(c.turns()) for c in load(path).conversations]
    chars = sum(len(render_turns(t)) for t in conversations)
    count = token_counter("o200k_base")
    print(f"{len(conversations)} conversations, {sum(map(len, conversations)):,} turns, {chars:,} chars, "
          f"{sum(count(render_turns(t)) for t in conversations):,} o200k tokens")
    print(f"{'chunker':<16}{'chunks':>8}{'mean tok':>10}{'max tok':>9}{'Mchar/s':>9}")
    for name in CHUNKERS.names():
        chunker = CHUNKERS.build(name)
        started = time.perf_counter()
        chunks = [c for turns in conversations for c in chunker.chunk(turns)]
        elapsed = time.perf_counter() - started
        tokens = [count(c.text) for c in chunks]
        print(f"{name:<16}{len(chunks):>8}{statistics.mean(tokens):>10.0f}{max(tokens):>9}"
              f"{chars / elapsed / 1e6:>9.2f}")
    decisions = Counter(AdaptiveChunker().plan(t).decision for t in conversations)
    small = Counter(AdaptiveChunker().plan(t[:100]).decision for t in conversations)
    print(f"adaptive(target_tokens={AdaptiveChunker().target_tokens}) decisions, "
          f"whole conversations: {dict(decisions)}; "
          f"first 100 turns: {dict(small)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT))
