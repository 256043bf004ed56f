"""A memory system's answer to one probe as the measures read it (``measures.Recalled``), while it is asked.

``system_outcome`` reads it as the ``replay.ProbeOutcome`` a lyra-lab pipeline's replay yields:

- **hits** are the system's ``k`` results (``k`` = the largest ``[run] ks``), as lyra-lab hits
  (``systems.as_recall_hits``), and **context** the block rendered from them within the
  pipeline's context budget; **recall_latency_s** is the wall time of that one query.
- **ranking** (``SystemRanking``) reads deeper than the hits the way a recaller's ranking is
  read: the equal-budget measures ask for 100 entries, then twice as many while the largest
  budget takes them all, and the system is asked again for that many results (untimed).  So a
  budget is filled from at most as many results as the system returns: one that caps its
  results below what a budget holds fills it only that far (``context_tokens@Btok`` shows it).
  The "complete" ranking (LongMemEval's session rule) goes on with the memory's other entries.
- **memory** (``MemoryState``) comes from the system's ``contents()``: everything it holds,
  mirrored into a ``MemoryStore`` and tallied as a replay tallies its own (``replay.MemoryTally``),
  listed again only after new turns were ingested.  A system that cannot list its memory has
  no ``retention`` and no entry counts (nDCG's ideal list is then the evidence turns).

Everything here reads the system while its memory is as the probe found it: the cell scores each
probe before the next turns are ingested (``systems.SystemReplay``).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from lyra_lab.backends import LineMemoCounter, TokenCount, token_counter
from lyra_lab.corpus import Probe
from lyra_lab.memory import MemoryEntry, MemoryStore, fit_context
from lyra_lab.replay import MemoryState, MemoryTally, ProbeOutcome
from lyra_lab.systems import MemorySession, SystemProbe, SystemReplay, as_memory_entries, as_recall_hits

#: Results asked for when a ranking is read deeper than the hits (as ``replay.DeepRanking`` does).
MIN_FETCH = 100


def context_counter(tokenizer: str) -> TokenCount:
    """The token counter contexts are rendered with (each memory line's count remembered where exact)."""
    count = token_counter(tokenizer)
    return LineMemoCounter(count) if count.lines_add_up else count


class SystemMemory:
    """The system's memory as the measures see it: its contents, mirrored and tallied per ingest.

    Args:
        replay: the system's run in progress (its open session, its ingest count).
        label: the system's label (entry ids are ``<label>:<system id>``).
        session_of: turn id → session id of the conversation.
        count: the token counter of the pipeline.
    """

    def __init__(self, replay: SystemReplay, label: str, session_of: Mapping[str, str], count: TokenCount):
        self.replay, self.label, self.session_of = replay, label, session_of
        self.conversation_id = replay.conversation.id
        self.store = MemoryStore()
        self.tally = MemoryTally(self.store, self.conversation_id, count)
        self.listed: bool | None = None  # None: not asked yet; False: the system cannot list its memory
        self._version = -1

    def sync(self) -> None:
        """List the memory again if turns were ingested since the last listing."""
        session = self.replay.session
        if session is None or self._version == self.replay.version or self.listed is False:
            return
        items = session.contents()
        self._version = self.replay.version
        self.listed = items is not None
        if items is None:
            return
        entries = {e.id: e for e in as_memory_entries(items, self.conversation_id, self.label, self.session_of)}
        gone = [e.id for e in self.store if entries.get(e.id) != e]
        self.store.apply(add=[e for i, e in entries.items() if i not in self.store or i in gone], remove=gone)
        self.tally.sync()

    def state(self, probe: Probe) -> MemoryState:
        """The memory's facts for ``probe`` (entry and token counts 0 when it cannot be listed)."""
        self.sync()
        if not self.listed:
            return MemoryState(entries=0, tokens=0)
        return self.tally.state(probe, self.session_of)

    def unranked(self, ranked: set[str]) -> list[MemoryEntry]:
        """The memory's entries not in ``ranked``, in the order the system first listed them."""
        return [e for e in self.store.entries(self.conversation_id) if e.id not in ranked] if self.listed else []


class SystemRanking:
    """The system's ranking of one probe's question, asked again deeper on demand (``measures.RankedEntries``)."""

    def __init__(self, memory: SystemMemory, asked: SystemProbe, first: Sequence[MemoryEntry], k: int):
        self._memory, self._asked = memory, asked
        self._version = memory.replay.version
        self._entries = list(first)
        self._done = len(first) < k  # the system returned fewer than asked: it has no more

    def entries(self, n: int, *, complete: bool = False) -> Sequence[MemoryEntry]:
        """The first ``n`` entries, best first; ``complete``: then the memory's unranked ones."""
        if n > len(self._entries) and not self._done:
            session = self._check()
            depth = max(n, 2 * len(self._entries), MIN_FETCH)
            hits = session.query(self._asked.probe.question, depth, now=self._asked.now)
            self._entries = as_memory_entries(hits, self._memory.conversation_id, self._memory.label,
                                              self._memory.session_of)
            self._done = len(hits) < depth
        if not complete or n <= len(self._entries) or not self._done:
            return self._entries[:n]
        self._check()
        rest = self._memory.unranked({e.id for e in self._entries})
        return (self._entries + rest)[:n]

    def _check(self) -> MemorySession:
        replay = self._memory.replay
        if replay.session is None or replay.version != self._version:
            raise RuntimeError("this ranking was read after the system's memory changed: read a probe's "
                               "ranking before the next turns are ingested")
        return replay.session


def system_outcome(asked: SystemProbe, memory: SystemMemory, k: int, context_budget: int,
                   count: TokenCount) -> ProbeOutcome:
    """The outcome of a probe just asked of a system (``asked``), read now, before the next ingest."""
    hits = as_recall_hits(asked.hits, memory.conversation_id, memory.label, memory.session_of)
    entries = [h.entry for h in hits]
    fit = fit_context(entries, context_budget, count)
    return ProbeOutcome(probe=asked.probe, recaller="", now=asked.now, hits=tuple(hits), context=fit.text,
                        context_tokens=fit.tokens, recall_latency_s=asked.latency_s,
                        memory=memory.state(asked.probe), ranking=SystemRanking(memory, asked, entries, k),
                        count=count)
