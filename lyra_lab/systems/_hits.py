"""A system's results as lyra-lab's own recall hits, so every metric applies unchanged.

Each ``SystemHit`` becomes a ``recall.Hit`` over a ``memory.MemoryEntry`` of the
same kind, text, source turns and date.  A hit whose kind is ``turn`` (one turn
verbatim) or ``chunk`` is verbatim evidence for the evaluation
(``memory.VERBATIM_KINDS``); a ``fact`` covers its turns but never counts as the
turn itself.  A hit without turn ids scores only on its text (answer in
context, QA).

>>> from lyra_lab.systems import SystemHit
>>> [hit] = as_recall_hits([SystemHit("Mel: I paint", 0.9, ("t7",), kind="turn")], "c1", "mem0:raw")
>>> hit.entry.kind, hit.entry.turn_ids, hit.rank, hit.via
('turn', ('t7',), 0, 'mem0:raw')
"""

from __future__ import annotations

from typing import Sequence

from lyra_lab.memory import MemoryEntry
from lyra_lab.recall import Hit
from lyra_lab.systems._types import SystemHit


def as_memory_entry(hit: SystemHit, conversation_id: str, label: str, rank: int) -> MemoryEntry:
    """The memory entry a system hit stands for (its id: ``<label>:<system id or rank>``)."""
    return MemoryEntry(id=f"{label}:{hit.id or rank}", conversation_id=conversation_id, kind=hit.kind,
                       text=hit.text, turn_ids=tuple(hit.turn_ids), start=hit.when, end=hit.when,
                       meta={"system": label})


def as_recall_hits(hits: Sequence[SystemHit], conversation_id: str, label: str) -> list[Hit]:
    """``recall.Hit``s (rank 0 first, ``via`` = the system's label) for a system's results, in order."""
    out: list[Hit] = []
    seen: set[str] = set()
    for rank, hit in enumerate(hits):
        entry = as_memory_entry(hit, conversation_id, label, rank)
        if entry.id in seen:  # a system that repeats an item: keep ids unique, as a store's are
            entry = as_memory_entry(SystemHit(hit.text, hit.score, hit.turn_ids, hit.when, hit.kind,
                                              f"{hit.id}#{rank}"), conversation_id, label, rank)
        seen.add(entry.id)
        out.append(Hit(entry=entry, score=float(hit.score), rank=rank, via=label))
    return out
