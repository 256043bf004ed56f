"""A ranking of distinct entries, and its hits built in bulk.

An index ranks rows, and a row is one entry, so its top rows need none of
``ranked``'s checks for repeated ids: ``Ranking`` says so, and ``ranked`` turns
its first ``k`` entries straight into ``Hit``s.  Replay builds ~650k hits on
LoCoMo (each probe's top k and its deeper budget ranking, per recaller), and a
frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``:
``hits_of`` instead sets the slots with ``map`` over their descriptors (about
half the cost), giving equal ``Hit`` objects.

``RankedHits`` is such hits left unbuilt: a sequence over a ranking's entries
and scores that builds a ``Hit`` only when one is read.  Replay keeps each
probe's deeper budget ranking so (100 entries deep, of which equal-budget
scores read ~15 entries and no ``Hit``), instead of ~600k ``Hit``s alive
until scoring.

>>> from lyra_lab.memory import MemoryEntry
>>> a, b = (MemoryEntry(id=i, conversation_id="c", kind="turn", text=i, turn_ids=()) for i in "ab")
>>> hits_of([a, b], [0.5, 0.25], "dense") == [Hit(a, 0.5, 0, "dense"), Hit(b, 0.25, 1, "dense")]
True
"""

from __future__ import annotations

from collections import deque
from itertools import repeat
from typing import Any, Iterator, Sequence, overload

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


def hits_of(entries: Sequence[MemoryEntry], scores: Sequence[float], via: str, first: int = 0) -> list[Hit]:
    """``[Hit(entry, score, rank, via) ...]`` ranked from ``first``, built without a Python-level loop."""
    n = len(entries)
    hits = list(map(object.__new__, repeat(Hit, n)))
    for setter, values in zip(_SLOTS, (entries, scores, range(first, first + n), repeat(via, n))):
        deque(map(setter, hits, values), maxlen=0)
    return hits


class RankedHits(Sequence[Hit]):
    """``hits_of(entries, scores, via)`` as a read-only sequence that builds each ``Hit`` when it is read.

    Equal to a tuple or list of the same hits (and to another ``RankedHits`` of them); a slice
    keeps the hits' ranks, as a tuple's would.

    >>> from lyra_lab.memory import MemoryEntry
    >>> a, b = (MemoryEntry(id=i, conversation_id="c", kind="turn", text=i, turn_ids=()) for i in "ab")
    >>> lazy = RankedHits([a, b], [0.5, 0.25], "dense")
    >>> lazy[1] == Hit(b, 0.25, 1, "dense") and lazy == hits_of([a, b], [0.5, 0.25], "dense")
    True
    >>> lazy[1:].entries == [b] and lazy[1:] == (Hit(b, 0.25, 1, "dense"),)
    True
    """

    __slots__ = ("entries", "first", "scores", "via")

    def __init__(self, entries: Sequence[MemoryEntry], scores: Sequence[float], via: str, first: int = 0):
        if len(entries) != len(scores):
            raise ValueError(f"ranked hits need one score per entry, got {len(scores)} for {len(entries)}")
        self.entries, self.scores, self.via, self.first = entries, scores, via, first

    def __len__(self) -> int:
        return len(self.entries)

    @overload
    def __getitem__(self, index: int) -> Hit: ...

    @overload
    def __getitem__(self, index: slice) -> "Sequence[Hit]": ...

    def __getitem__(self, index: int | slice) -> "Hit | Sequence[Hit]":
        n = len(self.entries)
        if isinstance(index, slice):
            start, stop, step = index.indices(n)
            if step != 1:  # not a run of ranks: the hits themselves
                return tuple(self)[index]
            stop = max(start, stop)
            return RankedHits(self.entries[start:stop], self.scores[start:stop], self.via, self.first + start)
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            raise IndexError(f"position {index} of {n} ranked hits")
        return Hit(self.entries[i], self.scores[i], self.first + i, self.via)

    def __iter__(self) -> Iterator[Hit]:
        return iter(hits_of(self.entries, self.scores, self.via, self.first))

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, (RankedHits, tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"RankedHits({list(self)!r})"
