"""Wall time of importing LoCoMo (median of 3) and what the import holds.

Usage: .venv/bin/python benchmarks/import_locomo.py [PATH]
(default PATH: the copy `lyra-lab datasets get locomo` installed, or $LYRA_LOCOMO)
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from lyra_lab import datasets
from lyra_lab.corpus import load

DEFAULT = datasets.find("locomo") or datasets.installed_path("locomo")  # `lyra-lab datasets get locomo` installs it


def timed(fn, repeats: int = 3) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else DEFAULT.resolve()
    if not path.is_file():
        print(f"LoCoMo not found at {path}; pass its path", file=sys.stderr)
        return 2
    seconds, corpus = timed(lambda: load(path))
    stats = corpus.stats()
    print(f"file            {path} ({path.stat().st_size:,} bytes)")
    print(f"import (locomo) {seconds * 1000:.0f} ms  (median of 3)")
    with tempfile.TemporaryDirectory() as tmp:
        native = corpus.save(Path(tmp) / "locomo.jsonl")
        save_seconds, _ = timed(lambda: corpus.save(Path(tmp) / "again.jsonl"))
        native_seconds, again = timed(lambda: load(native))
        print(f"save native     {save_seconds * 1000:.0f} ms  (median of 3, {native.stat().st_size:,} bytes)")
        print(f"load native     {native_seconds * 1000:.0f} ms  (median of 3, equal: {again == corpus})")
    for key in ("conversations", "sessions", "turns", "user_turns", "assistant_turns", "probes", "first", "last"):
        print(f"{key:<15} {stats[key]:,}" if isinstance(stats[key], int) else f"{key:<15} {stats[key]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
