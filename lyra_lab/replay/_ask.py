"""Ask one probe of the memory as it stands: every recaller, its rendered context, what memory holds.

Memory size and judge-free retention cost linear time in memory + probes: each
memory entry is rendered, token-counted and normalized once, when it enters the
store (``MemoryTally``), and each probe then looks its answer's tokens up in the
memory's vocabulary.  Nothing encodes or normalizes the whole memory per probe,
which real exports (megabytes of text) would make quadratic.

Each recaller is asked with a ``Query`` of its own, timed: its latency is that of a
user's first ask of the question (embedding the question included).  The outcome's
``ranking`` asks the same ``Query`` again, deeper, for the measures that read past the
k hits; it reuses what the timed call computed and is not timed.  Recallers that share
a dense index (``dense`` and ``hybrid`` with the same embedder) embed each memory entry
once; that indexing is charged to the first recaller that needed it, so compare embed
costs per memory pipeline, not between such recallers.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Iterable, Mapping, NamedTuple, Protocol

from lyra_lab.backends import Embedder, LineMemoCounter, TokenCount, TokenCounter
from lyra_lab.corpus import Probe
from lyra_lab.matching import answer_token_recall, normalized_tokens
from lyra_lab.memory import MemoryEntry, MemoryStore, entry_line, fit_context, memory_order
from lyra_lab.recall import BaseRecaller, Query, Recaller
from lyra_lab.replay._meter import MeteredEmbedder, PhaseMeter
from lyra_lab.replay._ranking import DeepRanking
from lyra_lab.replay._types import MemoryState, ProbeOutcome


class _Indexed(NamedTuple):
    """One memory entry as the tally keeps it."""

    entry: MemoryEntry
    line: str  # entry_line(entry), as render_memory joins it
    with_newline: int  # count(line + "\n")
    order: tuple[int, datetime, datetime, str]  # memory_order(entry)
    tokens: frozenset[str]  # its normalized words


class MemoryTally:
    r"""Tokens, normalized vocabulary and coverage of one conversation's memory, kept up to date entry by entry.

    ``memory_tokens`` equals ``count(render_memory(entries))`` for a counter whose counts add
    up by line (the OpenAI encodings: every rendered line starts with ``[``): the sum of
    ``count(line + "\\n")`` over all lines but the last plus ``count(last line)``.  For a
    server's tokenizer it may differ by a token or so per line.

    Attributes:
        entries_indexed: entries rendered, counted and normalized so far (a work counter: it
            grows with the memory, never with the probes).
    """

    def __init__(self, store: MemoryStore, conversation_id: str, count: TokenCount):
        self.store = store
        self.conversation_id = conversation_id
        self.count = count
        self.entries_indexed = 0
        self._version = 0
        self._indexed: dict[str, _Indexed] = {}
        self._vocab: Counter[str] = Counter()
        self._tokens_nl = 0
        self._covering: dict[str, set[str]] = {}  # turn id -> ids of the entries covering it
        self._in_session: dict[str, set[str]] = {}  # session id -> ids of the entries of it

    def sync(self) -> None:
        """Follow the store's changes since the last call."""
        if self._version == self.store.version:
            return
        touched = dict.fromkeys(entry_id for _, entry_id in self.store.changes_since(self._version))
        self._version = self.store.version
        for entry_id in touched:
            current = self.store.get(entry_id) if entry_id in self.store else None
            old = self._indexed.get(entry_id)
            if old is not None and old.entry is not current:
                self._forget(old)
            if current is not None and current.conversation_id == self.conversation_id \
                    and entry_id not in self._indexed:
                self._index(current)

    def _index(self, entry: MemoryEntry) -> None:
        line = entry_line(entry)
        indexed = _Indexed(entry, line, self.count(line + "\n"), memory_order(entry), normalized_tokens(line))
        self._indexed[entry.id] = indexed
        self._tokens_nl += indexed.with_newline
        self._vocab.update(indexed.tokens)
        for turn_id in entry.turn_ids:
            self._covering.setdefault(turn_id, set()).add(entry.id)
        for session_id in entry.session_ids:
            self._in_session.setdefault(session_id, set()).add(entry.id)
        self.entries_indexed += 1

    def _forget(self, old: _Indexed) -> None:
        entry = old.entry
        del self._indexed[entry.id]
        self._tokens_nl -= old.with_newline
        self._vocab.subtract(old.tokens)
        for turn_id in entry.turn_ids:
            self._covering[turn_id].discard(entry.id)
        for session_id in entry.session_ids:
            self._in_session[session_id].discard(entry.id)

    def state(self, probe: Probe, session_of: Mapping[str, str]) -> MemoryState:
        """The memory's ``MemoryState`` for ``probe`` (call ``sync`` first)."""
        entries = len(self._indexed)
        evidence = probe.evidence
        sessions = {session_of[turn] for turn in evidence if turn in session_of}
        return MemoryState(
            entries=entries, tokens=self.memory_tokens(),
            answer_recall=answer_token_recall(probe.answer, _Present(self._vocab)) if entries else None,
            relevant_entries=len(_union(self._covering.get(t, ()) for t in evidence)) if evidence else None,
            relevant_session_entries=len(_union(self._in_session.get(s, ()) for s in sessions)) if evidence else None)

    def memory_tokens(self) -> int:
        """Tokens of ``render_memory`` of the conversation's memory (after ``sync``)."""
        if not self._indexed:
            return 0
        last = max(self._indexed.values(), key=lambda item: item.order)  # the last line render_memory writes
        return self._tokens_nl - last.with_newline + self.count(last.line)


def _union(sets: Iterable[Iterable[str]]) -> set[str]:
    out: set[str] = set()
    for ids in sets:
        out.update(ids)
    return out


@dataclass(frozen=True)
class _Present:
    """``token in memory`` over a reference count (a removed entry leaves zero counts behind)."""

    counts: Counter[str]

    def __contains__(self, token: object) -> bool:
        return isinstance(token, str) and self.counts.get(token, 0) > 0


def line_memo(count: TokenCounter) -> TokenCount:
    """``count`` remembering each memory line's tokens where that keeps counts exact (OpenAI encodings)."""
    return LineMemoCounter(count) if count.lines_add_up else count


class Asker:
    """Asks every recaller each probe of one conversation, against ``store`` (owner thread only).

    Args:
        store: the memory the replay writes.
        conversation_id: whose memory is asked.
        recallers: label → recaller, all asked every probe.
        embedder: the embedder the recallers get (metered per recaller); None for recallers that embed nothing.
        k: hits of each timed recall.
    """

    def __init__(self, store: MemoryStore, conversation_id: str, recallers: Mapping[str, Recaller],
                 embedder: Embedder | None, k: int):
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        self.store = store
        self.conversation_id = conversation_id
        self.recallers = recallers
        self.k = k
        self.meters = {label: PhaseMeter() for label in recallers}
        self.embedders = {label: None if embedder is None else MeteredEmbedder(embedder, self.meters[label])
                          for label in recallers}

    def ask(self, probe: Probe, now: datetime, memory: MemoryState,
            render: "ContextRender") -> list[ProbeOutcome]:
        """Every recaller's outcome for ``probe`` at ``now`` (``memory``: the memory's state then)."""
        out = []
        for label, recaller in self.recallers.items():
            # what a recaller needs, it declares (the ceilings do): the evidence, or the whole memory
            told = isinstance(recaller, BaseRecaller) and recaller.needs_evidence()
            whole = isinstance(recaller, BaseRecaller) and recaller.whole_memory()
            query = Query(probe.question, self.conversation_id, embedder=self.embedders[label], now=now,
                          evidence=probe.evidence if told else ())
            k = max(self.k, memory.entries) if whole else self.k
            room = render.room.tokens(probe, render.count) if whole and render.room is not None else None
            start = time.perf_counter()
            hits = tuple(recaller.recall(self.store, query, k))
            latency = time.perf_counter() - start
            fit = fit_context([h.entry for h in hits], render.budget if room is None else room, render.count)
            ranking = DeepRanking(recaller, self.store, query, [h.entry for h in hits], k)
            if k != self.k:  # the whole memory was asked for: its hits are what the context shows
                hits = hits[:max(self.k, fit.whole + 1)]  # the whole entries and the one cut, if any
            out.append(ProbeOutcome(probe=probe, recaller=label, now=now, hits=hits, context=fit.text,
                                    context_tokens=fit.tokens, recall_latency_s=latency, memory=memory,
                                    ranking=ranking, count=render.count, answer_room=room))
        return out


class ContextRoom(Protocol):
    """The context budget of a whole-memory recaller for one probe (``measures.AnswerRoom`` is one)."""

    def tokens(self, probe: Probe, count: TokenCount) -> int:
        """The context tokens, counted by ``count``, that the answerer's window leaves beside ``probe``."""
        ...


@dataclass(frozen=True)
class ContextRender:
    """How a recall's hits become the context block: the pipeline's context budget and token counter.

    Attributes:
        budget: the pipeline's context budget (``[grid] context_tokens``).
        count: the pipeline's token counter.
        room: the budget of a recaller that declares ``whole_memory()`` (``full_context``): the
            room the answerer's window leaves for each probe; None: ``budget`` too.
    """

    budget: int
    count: TokenCount
    room: ContextRoom | None = None
