"""A ranking of distinct entries: what an index's top rows are, so hits need no check for repeated ids."""

from __future__ import annotations

from typing import Iterator

from lyra_lab.memory import MemoryEntry


class Ranking:
    """Distinct entries, best first, with their scores (floats): iterates as ``(entry, score)`` pairs.

    Only for entries that cannot repeat (an index's rows, the keys of a dict): ``ranked``
    takes its first ``k`` as they are, without checking ids.
    """

    __slots__ = ("entries", "scores")

    def __init__(self, entries: list[MemoryEntry], scores: list[float]):
        if len(entries) != len(scores):
            raise ValueError(f"a ranking needs one score per entry, got {len(scores)} for {len(entries)}")
        self.entries = entries
        self.scores = scores

    def __iter__(self) -> Iterator[tuple[MemoryEntry, float]]:
        return zip(self.entries, self.scores)

    def __len__(self) -> int:
        return len(self.entries)
