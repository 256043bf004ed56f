"""Two ceilings to set beside any recaller in a grid: ``oracle`` (perfect retrieval) and ``full_context``.

Neither is a strategy a user could deploy; they bound the others from above:

- ``oracle`` returns the memory entries that hold the probe's gold evidence turns and nothing else
  (AMB's ``--oracle`` reader ceiling, over lyra-lab's memory): the verbatim entry of each evidence
  turn where the memory keeps one, else the entries covering it (a chunk, a digest).  It is told
  the evidence through ``Query.evidence``, which only a recaller that declares ``needs_evidence()``
  is given.  Its context is rendered and budgeted as any other: same ``k``, same token budget.
  A probe without evidence (adversarial, abstention) gets no hits: nothing is the right context.
- ``full_context`` is the long-context baseline: the whole history up to the answerer's window.
  It declares ``whole_memory()``: it is asked for every entry of the conversation, not ``k``, and
  a grid cuts its context to the room the answering model's window leaves beside the prompt,
  question and answer (``measures.AnswerRoom``, from ``backends.context_window``), not to
  ``[grid] context_tokens``.  Its ranking is newest first, so that when the history does not
  fit, the newest entries are kept.

>>> from lyra_lab.memory import MemoryEntry, MemoryStore
>>> from datetime import datetime, timezone
>>> store = MemoryStore([MemoryEntry(id=f"t{i}", conversation_id="c", kind="turn", text=f"turn {i}",
...     turn_ids=(f"D1:{i}",), start=datetime(2024, 1, i, tzinfo=timezone.utc),
...     end=datetime(2024, 1, i, tzinfo=timezone.utc)) for i in (1, 2, 3)])
>>> [h.entry.id for h in Oracle().recall(store, Query("q", "c", evidence=("D1:3", "D1:1")), 5)]
['t1', 't3']
>>> [h.entry.id for h in FullContext().recall(store, Query("q", "c"), 5)]
['t3', 't2', 't1']
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lyra_lab.memory import VERBATIM_KINDS, MemoryEntry, MemoryStore
from lyra_lab.recall._base import RECALLERS, BaseRecaller, Scored
from lyra_lab.recall._types import Query


@RECALLERS.register("oracle")
@dataclass(frozen=True)
class Oracle(BaseRecaller):
    """The entries holding the probe's gold evidence turns, oldest first (a ceiling: it is told the answer's place)."""

    def needs_evidence(self) -> bool:
        """It is given the probe's gold evidence turn ids (``Query.evidence``)."""
        return True

    def ranking(self, store: MemoryStore, query: Query, k: int) -> Scored:
        """Each evidence turn's verbatim entry, else every entry covering it; all scored 1.0, oldest first."""
        wanted = set(query.evidence)
        if not wanted:
            return []
        entries = sorted((e for e in store.entries(query.conversation_id) if wanted & set(e.turn_ids)),
                         key=_oldest_first)
        verbatim = {t for e in entries if e.kind in VERBATIM_KINDS for t in e.turn_ids}
        return [(e, 1.0) for e in entries if e.kind in VERBATIM_KINDS or (wanted & set(e.turn_ids)) - verbatim]


@RECALLERS.register("full_context")
@dataclass(frozen=True)
class FullContext(BaseRecaller):
    """The whole memory, newest first, up to the answerer's window: the newest entries kept when it does not fit."""

    def whole_memory(self) -> bool:
        """It is asked for every entry of the conversation (the answerer's room, not ``k``, cuts it)."""
        return True

    def ranking(self, store: MemoryStore, query: Query, k: int) -> Scored:
        """Every entry, newest end first; scores fall by one per place (0, -1, -2, ...)."""
        entries = sorted(store.entries(query.conversation_id), key=_newest_first)
        return [(e, -float(i)) for i, e in enumerate(entries)]


def _oldest_first(entry: MemoryEntry) -> tuple[float, float, str]:
    """Undated entries last, then by id (store ids are unique, so the order is total)."""
    start, end = entry.start or entry.end, entry.end or entry.start
    return (start.timestamp() if start else math.inf, end.timestamp() if end else math.inf, entry.id)


def _newest_first(entry: MemoryEntry) -> tuple[float, str]:
    """Latest end first; undated entries last."""
    when = entry.end or entry.start
    return (-when.timestamp() if when else math.inf, entry.id)


def ceiling_names() -> list[str]:
    """The registered recallers that are ceilings, not strategies: those told the evidence or given everything."""
    built = ((name, RECALLERS.build(name)) for name in RECALLERS.names())
    return [name for name, r in built if isinstance(r, BaseRecaller) and (r.needs_evidence() or r.whole_memory())]

