"""What an interrupted run kept, said in one line: its finished cells, the answers and vectors in its caches.

``RunInterrupted`` is the ``KeyboardInterrupt`` the runner re-raises after writing every finished cell; the
CLI prints its line instead of a bare "interrupted", so a user knows what a re-run will not pay again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from lyra_lab._terminal import count
from lyra_lab.runs import read_log


@dataclass(frozen=True)
class KeptWork:
    """The work of an interrupted attempt that a re-run does not pay for again.

    Attributes:
        cells: cells of the grid finished now (this attempt's and earlier ones').
        of: cells in the grid.
        calls: LLM calls this attempt paid, whose answers the response cache keeps (0 with ``cache = "off"``).
        vectors: texts this attempt embedded, whose vectors the embedding cache keeps.
        cache: the run's response-cache mode.
    """

    cells: int
    of: int
    calls: int
    vectors: int
    cache: str = "run"

    def line(self) -> str:
        """``interrupted: kept 3 of 8 cells, 15 LLM answers, 58 vectors; run the same command to resume``."""
        kept = [f"{self.cells:,} of {count(self.of, 'cell')}"]
        if self.calls and self.cache != "off":
            kept.append(count(self.calls, "LLM answer"))
        kept.append(count(self.vectors, "vector"))
        lost = f" ({count(self.calls, 'LLM call')} paid but not kept: cache = \"off\")" \
            if self.calls and self.cache == "off" else ""
        return f"interrupted: kept {', '.join(kept)}{lost}; run the same command to resume"


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (or an interrupt from the API) after writing what it had finished."""

    def __init__(self, kept: KeptWork) -> None:
        """Carry ``kept`` (``str(exc)`` is its line)."""
        super().__init__(kept.line())
        self.kept = kept


def kept_work(log_path: Path, finished: int, grid: int, embeddings: Iterable[Mapping[str, object]],
              cache: str) -> KeptWork:
    """What the attempt logged last in ``log_path`` kept: its paid LLM calls (after its ``run_started``)."""
    calls = 0
    for event in read_log(log_path):
        if event.get("event") == "run_started":
            calls = 0
        elif event.get("event") == "llm_call" and not event.get("cached"):
            calls += 1
    vectors = sum(int(str(e.get("misses", 0) or 0)) for e in embeddings)
    return KeptWork(finished, grid, calls, vectors, cache)
