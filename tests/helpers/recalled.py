"""A hand-built probe recall for measure tests: a fake of what a replay yields (``measures.Recalled``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from lyra_lab.backends import PlainCount, TokenCount, as_count
from lyra_lab.corpus import Probe
from lyra_lab.memory import MemoryEntry
from lyra_lab.recall import Hit
from lyra_lab.replay import MemoryState


@dataclass(frozen=True)
class FixedRanking:
    """A ranking given in full; ``complete`` appends the memory's other entries (``rest``)."""

    ranked: tuple[MemoryEntry, ...]
    rest: tuple[MemoryEntry, ...] = ()

    def entries(self, n: int, *, complete: bool = False) -> Sequence[MemoryEntry]:
        return ((*self.ranked, *self.rest) if complete else self.ranked)[:n]


@dataclass(frozen=True)
class Recalled:
    """A probe's recall as the measures read it, every field given by the test."""

    probe: Probe
    hits: tuple[Hit, ...]
    ranking: FixedRanking
    count: TokenCount = field(default_factory=lambda: PlainCount(lambda text: len(text.split())))
    context: str = ""
    context_tokens: int = 0
    recall_latency_s: float = 0.0
    memory: MemoryState = MemoryState(0, 0)


def recalled(probe: Probe, ranking: Sequence[MemoryEntry], *, k: int = 1,
             count: TokenCount | Callable[[str], int] | None = None, **fields) -> Recalled:
    """``probe``'s recall: the first ``k`` of ``ranking`` as its hits, the whole ranking readable deeper."""
    hits = tuple(Hit(entry=e, score=1.0 - i / 10, rank=i) for i, e in enumerate(ranking))[:k]
    extra = {"count": as_count(count)} if count is not None else {}
    return Recalled(probe=probe, hits=hits, ranking=FixedRanking(tuple(ranking)), **extra, **fields)
