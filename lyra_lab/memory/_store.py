"""The memory a pipeline writes and recall reads: entries with provenance.

An entry is a raw turn, a chunk summary, a digest or a fact.  Every entry names
the source turn ids it covers, so recall over digests can be scored against
evidence.  The store is plain mutable state owned by one thread (the replay's
owner thread); strategies receive it as an argument and never keep it.

Changes go through ``apply`` so that a rollup commits all of its edits or none.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Iterable, Iterator, Mapping, Sequence

from lyra_lab.corpus import Turn


class EntryKind(StrEnum):
    """What a memory entry is; members are strings, so stored and logged values stay plain text.

    >>> EntryKind.TURN == "turn", f"{EntryKind.DIGEST}"
    (True, 'digest')
    """

    TURN = "turn"  # a raw turn, verbatim
    CHUNK = "chunk"  # a span of the transcript, verbatim
    SUMMARY = "summary"  # a summary of chunks, or a rollup's running summary
    DIGEST = "digest"  # a time-ladder period digest
    GIST = "gist"  # a session gist
    FACT = "fact"  # an extracted fact


#: Kinds that hold source turns verbatim (their text is the turns' text).
VERBATIM_KINDS: frozenset[str] = frozenset({EntryKind.TURN, EntryKind.CHUNK})
#: Kinds written by condensing other entries.
CONDENSED_KINDS: tuple[str, ...] = (EntryKind.DIGEST, EntryKind.GIST, EntryKind.SUMMARY, EntryKind.FACT)


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One unit of memory.

    Attributes:
        id: unique within the store.
        conversation_id: the scope it belongs to; recall never crosses it.
        kind: an ``EntryKind``: ``turn``, ``chunk``, ``summary``, ``digest``, ``gist`` or ``fact``.
        text: what recall serves.
        turn_ids: the source turns it covers (provenance).
        start, end: the time span of those turns (aware UTC) if known.
        level: 0 for raw turns, higher for coarser digests.
        period: the rollup period key (``2023-05-08``, ``2023-W19``, ``2023-05``) if any.
    """

    id: str
    conversation_id: str
    kind: str
    text: str
    turn_ids: tuple[str, ...]
    session_ids: tuple[str, ...] = ()
    start: datetime | None = None
    end: datetime | None = None
    level: int = 0
    period: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @classmethod
    def from_turn(cls, turn: Turn) -> "MemoryEntry":
        speaker = turn.speaker or turn.role
        return cls(
            id=f"turn:{turn.id}",
            conversation_id=turn.conversation_id,
            kind=EntryKind.TURN,
            text=f"{speaker}: {turn.text}",
            turn_ids=(turn.id,),
            session_ids=(turn.session_id,),
            start=turn.timestamp,
            end=turn.timestamp,
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["start"] = self.start.isoformat() if self.start else None
        data["end"] = self.end.isoformat() if self.end else None
        data["meta"] = dict(self.meta)
        return data


class MemoryStore:
    """Ordered entries, per conversation, with an append-only change counter.

    ``version`` increases on every change; indexes built over the store (the
    dense recaller's matrix) use it and ``changes_since`` to append rather
    than rebuild.
    """

    def __init__(self, entries: Iterable[MemoryEntry] = ()):
        self._entries: dict[str, MemoryEntry] = {}
        self._log: list[tuple[str, str]] = []  # (op, entry id), op in {"add", "remove"}
        # Derived indexes (a recaller's embedding matrix, a BM25 index) keyed by
        # their owner's name; they follow ``version``/``changes_since`` to stay in sync.
        self.cache: dict[str, Any] = {}
        for entry in entries:
            self._add(entry)

    # -- reading -------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._entries

    def __iter__(self) -> Iterator[MemoryEntry]:
        return iter(list(self._entries.values()))

    def get(self, entry_id: str) -> MemoryEntry:
        return self._entries[entry_id]

    def entries(self, conversation_id: str | None = None, kind: str | None = None) -> list[MemoryEntry]:
        return [
            e
            for e in self._entries.values()
            if (conversation_id is None or e.conversation_id == conversation_id)
            and (kind is None or e.kind == kind)
        ]

    @property
    def version(self) -> int:
        return len(self._log)

    def changes_since(self, version: int) -> list[tuple[str, str]]:
        """The ``(op, entry_id)`` changes made after ``version``."""
        return self._log[version:]

    def dumps(self) -> str:
        """A canonical text form, for byte-identical comparisons and snapshots."""
        return "\n".join(json.dumps(e.to_json(), sort_keys=True, ensure_ascii=False) for e in self._entries.values())

    # -- writing -------------------------------------------------------------
    def add(self, entries: MemoryEntry | Sequence[MemoryEntry]) -> None:
        self.apply(add=[entries] if isinstance(entries, MemoryEntry) else entries)

    def apply(self, add: Sequence[MemoryEntry] = (), remove: Sequence[str] = ()) -> None:
        """Remove then add, all or nothing: a bad edit raises before anything changes."""
        remove = list(remove)
        missing = [r for r in remove if r not in self._entries]
        if missing:
            raise KeyError(f"cannot remove unknown memory entries: {missing[:5]}")
        remaining = set(self._entries) - set(remove)
        seen: set[str] = set()
        for entry in add:
            if entry.id in remaining or entry.id in seen:
                raise ValueError(f"duplicate memory entry id {entry.id!r}")
            seen.add(entry.id)
        for entry_id in remove:
            del self._entries[entry_id]
            self._log.append(("remove", entry_id))
        for entry in add:
            self._add(entry)

    def _add(self, entry: MemoryEntry) -> None:
        if entry.id in self._entries:
            raise ValueError(f"duplicate memory entry id {entry.id!r}")
        self._entries[entry.id] = entry
        self._log.append(("add", entry.id))
