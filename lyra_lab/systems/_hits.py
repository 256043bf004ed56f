"""A system's results as lyra-lab's own recall hits, so every metric applies unchanged.

Each ``SystemHit`` becomes a ``recall.Hit`` over a ``memory.MemoryEntry`` of the
same kind, text, source turns and dates (``when`` … ``until``).  A hit whose kind
is ``turn`` (one turn verbatim) or ``chunk`` is verbatim evidence for the
evaluation (``memory.VERBATIM_KINDS``); a ``fact`` covers its turns but never
counts as the turn itself.  A hit without turn ids scores only on its text
(answer in context, QA).  Given the conversation's turn → session map, an entry
also names the sessions of its turns (the session-level measures read them).

>>> from lyra_lab.systems import SystemHit
>>> [hit] = as_recall_hits([SystemHit("Mel: I paint", 0.9, ("t7",), kind="turn")], "c1", "mem0:raw", {"t7": "s2"})
>>> hit.entry.kind, hit.entry.turn_ids, hit.entry.session_ids, hit.rank, hit.via
('turn', ('t7',), ('s2',), 0, 'mem0:raw')
"""

from __future__ import annotations

from typing import Mapping, Sequence

from lyra_lab.memory import MemoryEntry
from lyra_lab.recall import Hit
from lyra_lab.systems._types import SystemHit

NO_SESSIONS: Mapping[str, str] = {}


def as_memory_entry(hit: SystemHit, conversation_id: str, label: str, rank: int,
                    session_of: Mapping[str, str] = NO_SESSIONS) -> MemoryEntry:
    """The memory entry a system hit stands for (its id: ``<label>:<system id or rank>``)."""
    sessions = tuple(dict.fromkeys(session_of[t] for t in hit.turn_ids if t in session_of))
    return MemoryEntry(id=f"{label}:{hit.id or rank}", conversation_id=conversation_id, kind=hit.kind,
                       text=hit.text, turn_ids=tuple(hit.turn_ids), session_ids=sessions, start=hit.when,
                       end=hit.until or hit.when, meta={"system": label})


def as_memory_entries(hits: Sequence[SystemHit], conversation_id: str, label: str,
                      session_of: Mapping[str, str] = NO_SESSIONS) -> list[MemoryEntry]:
    """``as_memory_entry`` of each hit in order, their ids kept unique (a repeated id gets ``#<rank>``)."""
    out: list[MemoryEntry] = []
    seen: set[str] = set()
    for rank, hit in enumerate(hits):
        entry = as_memory_entry(hit, conversation_id, label, rank, session_of)
        if entry.id in seen:  # a system that repeats an item: keep ids unique, as a store's are
            entry = as_memory_entry(SystemHit(hit.text, hit.score, hit.turn_ids, hit.when, hit.kind,
                                              f"{hit.id}#{rank}", hit.until), conversation_id, label, rank,
                                    session_of)
        seen.add(entry.id)
        out.append(entry)
    return out


def as_recall_hits(hits: Sequence[SystemHit], conversation_id: str, label: str,
                   session_of: Mapping[str, str] = NO_SESSIONS) -> list[Hit]:
    """``recall.Hit``s (rank 0 first, ``via`` = the system's label) for a system's results, in order."""
    entries = as_memory_entries(hits, conversation_id, label, session_of)
    return [Hit(entry=entry, score=float(hit.score), rank=rank, via=label)
            for rank, (hit, entry) in enumerate(zip(hits, entries))]
