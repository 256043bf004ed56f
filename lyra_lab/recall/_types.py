"""The contract of a recaller: a query in, scored memory entries of one conversation out."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, Sequence, runtime_checkable

from lyra_lab.backends import Embedder
from lyra_lab.memory import MemoryEntry, MemoryStore


@dataclass(frozen=True, slots=True)
class Hit:
    """One recalled entry, its score and 0-based rank."""

    entry: MemoryEntry
    score: float
    rank: int
    via: str = ""


@runtime_checkable
class Recaller(Protocol):
    def recall(
        self,
        store: MemoryStore,
        query: str,
        k: int,
        *,
        conversation_id: str,
        embedder: Embedder | None = None,
        now: datetime | None = None,
    ) -> Sequence[Hit]: ...
