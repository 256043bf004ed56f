"""What a probe's measures read: its recall, its rendered context, and the memory it was asked of.

A replay (``lyra_lab.replay``) or an external memory system hands each probe's recall to the
measures as an object with the attributes of ``Recalled``: the hits of the timed top-k call,
the context rendered from them, the memory's state when the probe was asked, a ranking that
can be read deeper than k (equal-budget scores fill a context of B tokens from it, and
LongMemEval's session rule widens to k distinct sessions), and the token counter the context
was rendered with.  The measures know nothing else of where it came from.
"""

from __future__ import annotations

from typing import Protocol, Sequence

from lyra_lab.backends import TokenCount
from lyra_lab.corpus import Probe
from lyra_lab.memory import MemoryEntry
from lyra_lab.recall import Hit


class MemoryFacts(Protocol):
    """The conversation's memory at the moment a probe was asked (``lyra_lab.replay.MemoryState`` is one)."""

    @property
    def entries(self) -> int:
        """Entries in memory."""
        ...

    @property
    def tokens(self) -> int:
        """Tokens of the whole rendered memory."""
        ...

    @property
    def answer_recall(self) -> float | None:
        """Share of the gold answer's normalized tokens anywhere in memory; None: not computed (no answer)."""
        ...

    @property
    def relevant_entries(self) -> int | None:
        """Entries covering an evidence turn (nDCG's ideal list); None without evidence."""
        ...

    @property
    def relevant_session_entries(self) -> int | None:
        """Entries covering a turn of an evidence session (LongMemEval's session-level ideal list)."""
        ...


class RankedEntries(Protocol):
    """A recaller's ranking of one probe's question, readable at any depth."""

    def entries(self, n: int, *, complete: bool = False) -> Sequence[MemoryEntry]:
        """The first ``n`` entries, best first (fewer when there are fewer).

        ``complete``: the recaller's ranking followed by the memory entries it did not rank, in
        memory order (as a retriever that scores every document ranks the ones scoring nothing),
        so the list reaches every entry of the memory.
        """
        ...


class Recalled(Protocol):
    """One probe's recall, as measures read it (``lyra_lab.replay.ProbeOutcome`` is one)."""

    @property
    def probe(self) -> Probe:
        """The probe asked."""
        ...

    @property
    def hits(self) -> Sequence[Hit]:
        """The timed top-k hits, best first."""
        ...

    @property
    def context(self) -> str:
        """The context block rendered from the hits (the pipeline's own context budget)."""
        ...

    @property
    def context_tokens(self) -> int:
        """Tokens of ``context``."""
        ...

    @property
    def recall_latency_s(self) -> float:
        """Wall time of the timed recall call."""
        ...

    @property
    def memory(self) -> MemoryFacts:
        """The memory when the probe was asked."""
        ...

    @property
    def ranking(self) -> RankedEntries:
        """The recaller's ranking of the same question, deeper than the hits."""
        ...

    @property
    def count(self) -> TokenCount:
        """The token counter the context is rendered with (the pipeline's tokenizer)."""
        ...
