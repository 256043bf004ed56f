"""The contract of a chunker: turns (or text) in, ordered chunks that keep turn ids out."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, Sequence, runtime_checkable

from lyra_lab.corpus import Turn


@dataclass(frozen=True, slots=True)
class Chunk:
    """A contiguous piece of a rendered transcript.

    ``"".join(c.text for c in chunks)`` restores the chunker's input exactly
    (for overlap chunkers, after dropping each chunk's first ``overlap_chars``).
    """

    index: int
    text: str
    turn_ids: tuple[str, ...] = ()
    session_ids: tuple[str, ...] = ()
    start: datetime | None = None
    end: datetime | None = None
    tokens: int | None = None
    overlap_chars: int = 0


@runtime_checkable
class Chunker(Protocol):
    """Splits a conversation into chunks. A frozen dataclass of its parameters."""

    def chunk(self, turns: Sequence[Turn] | str) -> list[Chunk]: ...
