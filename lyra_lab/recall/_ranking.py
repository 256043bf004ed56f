"""A ranking of distinct entries, and its hits built in bulk.

An index ranks rows, and a row is one entry, so its top rows need none of
``ranked``'s checks for repeated ids: ``Ranking`` says so, and ``ranked`` turns
its first ``k`` entries straight into ``Hit``s.  Replay builds ~650k hits on
LoCoMo (each probe's top k and its deeper budget ranking, per recaller), and a
frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``:
``hits_of`` instead sets the slots with ``map`` over their descriptors (about
half the cost), giving equal ``Hit`` objects.

>>> from lyra_lab.memory import MemoryEntry
>>> a, b = (MemoryEntry(id=i, conversation_id="c", kind="turn", text=i, turn_ids=()) for i in "ab")
>>> hits_of([a, b], [0.5, 0.25], "dense") == [Hit(a, 0.5, 0, "dense"), Hit(b, 0.25, 1, "dense")]
True
"""

from __future__ import annotations

from collections import deque
from itertools import repeat
from typing import Iterator, Sequence

from lyra_lab.memory import MemoryEntry
from lyra_lab.recall._types import Hit

_SLOTS = tuple(Hit.__dict__[name].__set__ for name in ("entry", "score", "rank", "via"))


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


def hits_of(entries: Sequence[MemoryEntry], scores: Sequence[float], via: str) -> list[Hit]:
    """``[Hit(entry, score, rank, via) ...]`` ranked from 0, built without a Python-level loop."""
    n = len(entries)
    hits = list(map(object.__new__, repeat(Hit, n)))
    for setter, values in zip(_SLOTS, (entries, scores, range(n), repeat(via, n))):
        deque(map(setter, hits, values), maxlen=0)
    return hits
