"""A pipeline's memory built live, turn by turn, for serving: no schedule known in advance.

The replay engine plans a whole conversation first, so its trigger sees the
next turn when the current one arrives (one turn of look-ahead): the end of a
session is flushed before a probe asked between two sessions.  A live memory
cannot look ahead.  ``PipelineMemory`` decides a trigger flush when the next
turn arrives (``add``), and flushes what is pending when told that no turn
follows (``finish``) or when it is closed.  So between two turns, a live
memory may still hold the last window's raw turns where the replay engine
already wrote its summary (or chunks) and rolled up; once ``finish`` is
called, both memories are the same, entry for entry.

A flush is the replay engine's own: ``summarize_window`` and a ``Flusher`` from
``_flush``, on the calling thread (a live memory has no windows ahead of it to
summarize in parallel).

>>> from lyra_lab.chunking import TurnWindowChunker
>>> from lyra_lab.recall import Bm25
>>> from lyra_lab.backends import FakeLLM
>>> memory = PipelineMemory("c1", Pipeline(TurnWindowChunker(max_turns=2)), LiveSetup(FakeLLM(), recaller=Bm25()))
>>> memory.pending, len(memory.store)
(0, 0)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Sequence

from lyra_lab.backends import Backend, Embedder, Usage, token_counter
from lyra_lab.corpus import Turn
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import Hit, Query, Recaller
from lyra_lab.replay._engine import EventLog
from lyra_lab.replay._flush import Flusher, summarize_window
from lyra_lab.replay._meter import PhaseMeter
from lyra_lab.replay._pipeline import Pipeline
from lyra_lab.replay._plan import SYNTHETIC_EPOCH, Step


@dataclass(frozen=True)
class LiveSetup:
    """How a live memory runs: its models, the recaller that answers it, and where its events go.

    The live counterpart of ``ReplaySetup``.

    Attributes:
        backend: the LLM of the summarizer and the rollup (unused by an LLM-free pipeline).
        recaller: answers ``PipelineMemory.recall`` (None: a memory that is built, never asked).
        embedder: for dense recallers.
        log: a run log (``lyra_lab.runs.RunLog``) or anything with ``event(kind, **fields)``, or None.
    """

    backend: Backend
    recaller: Recaller | None = None
    embedder: Embedder | None = None
    log: EventLog | None = None


class PipelineMemory:
    """One conversation's memory under a pipeline, fed one turn at a time (owner thread only).

    Args:
        conversation_id: the memory's scope (recall never crosses it).
        pipeline: chunker, summarizer, rollup, trigger and budgets, as in a replay.
        setup: the backend, the recaller, the embedder and the event log (``LiveSetup``).
    """

    def __init__(self, conversation_id: str, pipeline: Pipeline, setup: LiveSetup):
        self.conversation_id = conversation_id
        self.pipeline = pipeline
        self.setup = setup
        self.store = MemoryStore()
        self.flushes = 0
        self._pending: list[Turn] = []
        self._last: datetime | None = None
        self._meter = PhaseMeter(self._emit)
        self._flusher = Flusher(self.store, conversation_id, pipeline, setup.backend,
                                token_counter(pipeline.tokenizer), self._meter, self._emit)

    @property
    def pending(self) -> int:
        """Turns fed since the last flush."""
        return len(self._pending)

    def add(self, turn: Turn) -> None:
        """Feed the next turn: flush first if the trigger fires on its arrival, then store it raw.

        A turn without a timestamp takes the previous turn's (as ``replay.clock_order`` does).
        """
        if turn.conversation_id != self.conversation_id:
            raise ValueError(f"turn {turn.id!r} belongs to {turn.conversation_id!r}, not {self.conversation_id!r}")
        turn = self._dated(turn)
        if self._pending and self.pipeline.trigger.fires(self._pending, turn):
            self._flush()
        self.store.add(MemoryEntry.from_turn(turn))
        self._pending.append(turn)

    def extend(self, turns: Sequence[Turn]) -> None:
        for turn in turns:
            self.add(turn)

    def finish(self) -> None:
        """No turn follows: flush what is pending (the end of a conversation always flushes)."""
        if self._pending:
            self._flush()

    def recall(self, query: str, k: int, now: datetime | None = None) -> list[Hit]:
        """The recaller's ``k`` best hits for ``query`` over the memory as it stands.

        Raises:
            ValueError: the memory was set up without a recaller.
        """
        if self.setup.recaller is None:
            raise ValueError(f"the live memory of {self.conversation_id!r} has no recaller (LiveSetup.recaller)")
        asked = Query(query, self.conversation_id, embedder=self.setup.embedder, now=now)
        return list(self.setup.recaller.recall(self.store, asked, k))

    def usage(self) -> Usage:
        """LLM usage of every flush so far (summaries and rollups)."""
        phases = self._meter.phases(("summarize", "rollup"))
        return phases["summarize"].usage + phases["rollup"].usage

    def _dated(self, turn: Turn) -> Turn:
        if turn.timestamp is None:
            stamp = self._last if self._last is not None else SYNTHETIC_EPOCH + timedelta(seconds=len(self.store))
            turn = dataclasses.replace(turn, timestamp=stamp)
        self._last = turn.timestamp
        return turn

    def _flush(self) -> None:
        turns = tuple(self._pending)
        step = Step("flush", now=turns[-1].timestamp, turns=turns, seq=self.flushes)  # type: ignore[arg-type]
        self._flusher.flush(step, summarize_window(self.conversation_id, self.pipeline, step, self.setup.backend))
        self.flushes += 1
        self._pending = []

    def _emit(self, event: str, /, **fields: object) -> None:
        if self.setup.log is not None:
            self.setup.log.event(event, conversation_id=self.conversation_id, **fields)
