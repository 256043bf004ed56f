"""What replay hands on: per probe, what recall served from the memory as it stood, and what it cost."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from typing import Sequence

from lyra_lab.backends import TokenCount, Usage
from lyra_lab.corpus import Probe
from lyra_lab.measures import RankedEntries
from lyra_lab.recall import Hit


@dataclass(frozen=True, slots=True)
class PhaseCost:
    """Calls, tokens, dollars and wall time spent in one phase (summarize, rollup, embed, recall, answer).

    ``usage`` and ``latencies_s`` count every call as first paid (a response-cache
    hit carries its original tokens, dollars and latency); ``latency_s`` is the
    wall time of this run and ``paid`` the usage of the calls this run paid for.
    """

    phase: str
    usage: Usage = Usage()
    latency_s: float = 0.0
    latencies_s: tuple[float, ...] = ()
    paid: Usage = Usage()


@dataclass(frozen=True, slots=True)
class MemoryState:
    """The conversation's memory at the moment a probe was asked (``lyra_lab.measures.MemoryFacts``).

    Attributes:
        entries: entries in memory.
        tokens: tokens of the whole rendered memory (``memory.render_memory``).
        answer_recall: share of the probe's normalized answer tokens anywhere in memory; None for
            an empty memory or an empty answer.
        relevant_entries: entries covering an evidence turn (nDCG's ideal list); None without evidence.
        relevant_session_entries: entries covering a turn of an evidence session; None without evidence.
    """

    entries: int
    tokens: int
    answer_recall: float | None = None
    relevant_entries: int | None = None
    relevant_session_entries: int | None = None


@dataclass(frozen=True)
class ProbeOutcome:
    """One recaller's recall for one probe at its ``asked_at`` on the replay clock (``measures.Recalled``).

    A memory system's answer to a probe is one too (``experiments`` builds it from the system's hits).

    Attributes:
        probe: the probe asked.
        recaller: the recaller's label in the grid.
        now: when it was asked on the replay clock.
        hits: the timed top-k call's hits, best first.
        context: the context block rendered from the hits within the pipeline's context budget.
        context_tokens: its token count.
        recall_latency_s: wall time of the timed recall call (embedding the question included).
        memory: the memory when it was asked.
        ranking: the recaller's ranking of the same question at any depth (``DeepRanking``, or a
            system's); it can be read only while the memory is as the probe found it (a replay
            yields the outcome then).
        count: the token counter the context was rendered with (the pipeline's tokenizer).
        answer_room: the budget the context was cut to when it is not the pipeline's: a
            whole-memory recaller's (``full_context``) room in the answerer's window; None: the
            pipeline's ``context_budget``.
    """

    probe: Probe
    recaller: str
    now: datetime
    hits: Sequence[Hit]
    context: str
    context_tokens: int
    recall_latency_s: float
    memory: MemoryState
    ranking: RankedEntries = field(repr=False, compare=False)
    count: TokenCount = field(repr=False, compare=False)
    answer_room: int | None = None

    def untraced(self) -> "ProbeOutcome":
        """The outcome as measures read it for a recaller (a system) that cannot trace hits to turns.

        The probe without evidence, so no turn-level retrieval measure is computed (absent, never 0).
        """
        return dataclasses.replace(self, probe=dataclasses.replace(self.probe, evidence=()))
