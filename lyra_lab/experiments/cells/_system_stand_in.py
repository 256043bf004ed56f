"""A memory system's stand-in for the plan's dry run: in process, doing what the system declares, nothing more.

``lyra-lab plan`` runs nothing outside lyra-lab's process, so a system cell is never run for
real to be forecast.  Its dry run replaces the system with a ``DeclaredSystem`` built from
what the system declares (``MemorySystem.declare()``, ``needs()``):

* ingest: the LLM calls it declares per ingested turn go to the cell's backend (the dry run's
  stand-in model), each carrying the turns' text and the declared prompt overhead; every turn
  is embedded as a passage when the system embeds;
* query: the declared calls per query, the question embedded as a query when it embeds, and
  the ``k`` latest turns as hits (verbatim), so the answering stage reads a context of the
  size the run's budget allows, as it will in the run.

The answering stage and the judges are lyra-lab's own and run as for any cell.  Calls per
turn are a low–high pair (``reply``): the plan's low and high figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Sequence

from lyra_lab.backends import Backend, Embedder, Message
from lyra_lab.corpus import Turn
from lyra_lab.systems import BaseSession, Declared, IngestReport, MemorySystem, Needs, SystemHit


@dataclass(frozen=True)
class DeclaredSystem:
    """A system as it declares itself (see the module docstring); ``reply`` picks the low or high figures."""

    name: str
    declared: Declared
    uses: Needs
    traced: bool
    reply: Literal["low", "high"] = "low"

    @classmethod
    def of(cls, system: MemorySystem, reply: Literal["low", "high"]) -> "DeclaredSystem":
        """The stand-in of ``system``."""
        return cls(system.label(), system.declare(), system.needs(), system.traces(), reply)

    def label(self) -> str:
        return self.name

    def needs(self) -> Needs:
        return self.uses

    def traces(self) -> bool:
        return self.traced

    def declare(self) -> Declared:
        return self.declared

    def notice(self) -> str:
        return ""  # a plan's stand-in says nothing in a run's log

    def open(self, conversation_id: str, backend: Backend | None, embedder: Embedder | None) -> "DeclaredSession":
        return DeclaredSession(self, backend, embedder)


class DeclaredSession(BaseSession):
    """The stand-in's memory: every turn ingested, the latest ``k`` turns returned."""

    def __init__(self, system: DeclaredSystem, backend: Backend | None, embedder: Embedder | None):
        super().__init__(system.name)
        self.system, self.backend, self.embedder = system, backend, embedder
        self.turns: list[Turn] = []
        self._high = system.reply == "high"

    def _calls(self, rate: tuple[float, float], items: int, text: str) -> int:
        calls = math.ceil(items * (rate[1] if self._high else rate[0]) - 1e-9)
        if calls and self.backend is not None:
            overhead = self.system.declared.prompt_overhead_tokens[1 if self._high else 0]
            message: Message = {"role": "user", "content": " ".join(["memory"] * overhead + [text])}
            cap = self.system.declared.max_tokens
            for _ in range(calls):
                self.backend.complete([message], **({"max_tokens": cap} if cap else {}))
        return calls

    def _ingest(self, turns: list[Turn], final: bool) -> IngestReport:
        self.turns += turns
        text = "\n".join(f"{t.speaker or t.role}: {t.text}" for t in turns)
        self._calls(self.system.declared.calls_per_turn, len(turns), text)
        if self.embedder is not None and self.system.uses.embedder and turns:
            self.embedder.embed([t.text for t in turns], kind="passage")
        return IngestReport(items=len(turns))

    def _query(self, question: str, k: int, now: datetime | None) -> Sequence[SystemHit]:
        self._calls(self.system.declared.calls_per_query, 1, question)
        if self.embedder is not None and self.system.uses.embedder:
            self.embedder.embed([question], kind="query")
        latest = self.turns[-k:][::-1]
        return [SystemHit(t.text, float(-i), (t.id,) if self.system.traced else (), t.timestamp, kind="turn", id=t.id)
                for i, t in enumerate(latest)]

    def _contents(self) -> Sequence[SystemHit] | None:
        return None
