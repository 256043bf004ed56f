"""Ask one probe of the memory as it stands: every recaller, its rendered context, memory size.

Memory size and judge-free retention cost linear time in memory + probes: each
memory entry is rendered, token-counted and normalized once, when it enters
the store (``MemoryTally``), and each probe then looks its answer's tokens up
in the memory's vocabulary.  Nothing encodes or normalizes the whole memory
at once, which real exports (megabytes of text) would make quadratic, or
crash the tokenizer.  The rendered memory text is still built once per memory
version, not once per probe × recaller.

For equal-budget scoring each recaller is asked a second time for a deeper
ranking (``BUDGET_DEPTH`` hits, the query's embedding reused, not metered as
recall latency; its ``Hit``s are built only as they are read, ``RankedHits``), so a budget of B tokens can be filled with as many entries as
fit: short raw turns must not run out at k while long digests fill B.  Every
recaller's timed top-k call comes first, each after the indexes forget their
last query (``recall.forget_queries``), so its latency is that of a user's
first ask; the deeper rankings come after them and reuse what the indexes
remember of the query (scores, top rows), hybrid's those of dense and BM25.  The
count of relevant memory entries for nDCG's ideal list comes from a turn →
covering-entries index kept with the tally, so it too costs nothing per probe
beyond the probe's evidence.

Embedding calls are metered per recaller (``embed`` phase).  Recallers that
share a dense index (``dense`` and ``hybrid`` with the same embedder) embed each
memory entry once; that indexing is charged to the first recaller that needed
it, so compare embed costs per memory pipeline, not between such recallers.
"""

from __future__ import annotations

import time
from collections import Counter
from datetime import datetime
from typing import Any, Callable, Mapping, Sequence

from lyra_lab.corpus import Probe
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import RankedHits, forget_queries
from lyra_lab.replay._meter import MeteredEmbedder, PhaseMeter
from lyra_lab.replay._types import ProbeOutcome

# Hits of the deeper ranking that equal-budget scores fill B tokens from: the shortest
# rendered line ("[2023-05-08] user: ok") is ~12 tokens, so 100 fill a 1024-token budget.
BUDGET_DEPTH = 100


class MemoryTally:
    """Tokens and normalized vocabulary of one conversation's memory, kept up to date entry by entry.

    ``memory_tokens`` equals ``count(render_memory(entries))`` for the OpenAI
    encodings: every rendered line starts with ``[``, and their pre-tokenizer
    always splits after a newline followed by ``[``, so the count is the sum of
    ``count(line + "\n")`` over all lines but the last plus ``count(last line)``.
    For a server's tokenizer it may differ by a token or so per line.

    Attributes:
        entries_indexed: entries rendered, counted and normalized so far (a
            work counter: it grows with the memory, never with the probes).
    """

    def __init__(self, store: MemoryStore, conversation_id: str, count: Callable[[str], int]):
        self.store = store
        self.conversation_id = conversation_id
        self.count = count
        self.entries_indexed = 0
        self._version = 0
        # id -> (entry, count(line + "\n"), memory_order(entry), entry_line(entry))
        self._indexed: dict[str, tuple[MemoryEntry, int, tuple, str]] = {}
        self._tokens_of: dict[str, frozenset[str]] = {}
        self._vocab: Counter[str] = Counter()
        self._tokens_nl = 0
        self._covering: dict[str, set[str]] = {}  # turn id -> ids of the entries covering it

    def sync(self) -> None:
        """Follow the store's changes since the last call."""
        from lyra_lab.matching import normalized_tokens
        from lyra_lab.memory import entry_line, hit_line_counts, memory_order

        if self._version == self.store.version:
            return
        touched = dict.fromkeys(entry_id for _, entry_id in self.store.changes_since(self._version))
        self._version = self.store.version
        for entry_id in touched:
            current = self.store.get(entry_id) if entry_id in self.store else None
            old = self._indexed.get(entry_id)
            if old is not None and old[0] is not current:
                del self._indexed[entry_id]
                self._tokens_nl -= old[1]
                self._vocab.subtract(self._tokens_of.pop(entry_id))
                for turn_id in old[0].turn_ids:
                    self._covering[turn_id].discard(entry_id)
            if current is not None and current.conversation_id == self.conversation_id \
                    and entry_id not in self._indexed:
                line = entry_line(current)
                tokens = normalized_tokens(line)
                # Without a period label its memory line is its context line: counted once for both.
                with_nl = self.count(line + "\n") if current.period else hit_line_counts(current, self.count)[1]
                self._indexed[entry_id] = (current, with_nl, memory_order(current), line)
                self._tokens_nl += self._indexed[entry_id][1]
                self._tokens_of[entry_id] = tokens
                self._vocab.update(tokens)
                for turn_id in current.turn_ids:
                    self._covering.setdefault(turn_id, set()).add(entry_id)
                self.entries_indexed += 1

    def memory_tokens(self, entries: list[MemoryEntry]) -> int:
        """Tokens of ``render_memory(entries)`` (``entries``: the conversation's, after ``sync``)."""

        if not entries:
            return 0
        last = self._indexed[max(entries, key=lambda entry: self._indexed[entry.id][2]).id]  # memory_order's last
        return self._tokens_nl - last[1] + self.count(last[3])

    def render(self, entries: list[MemoryEntry]) -> str:
        """``render_memory(entries)`` (``entries``: the conversation's, after ``sync``) from the lines kept here."""
        keyed = [self._indexed[entry.id] for entry in entries]
        keyed.sort(key=lambda item: item[2])
        return "\n".join(item[3] for item in keyed)

    def relevant_entries(self, evidence: Any) -> int | None:
        """Entries covering some evidence turn (``measures.relevant_count``); None without evidence."""
        if not evidence:
            return None
        return len(set().union(*(self._covering.get(turn_id, ()) for turn_id in evidence)))

    def answer_recall(self, answer: Any) -> float | None:
        """Share of ``answer``'s normalized tokens anywhere in the memory (None for an empty answer)."""
        from lyra_lab.matching import answer_token_recall

        return answer_token_recall(answer, _Present(self._vocab))


class _Present:
    """``token in memory`` over a reference count (a removed entry leaves zero counts behind)."""

    __slots__ = ("counts",)

    def __init__(self, counts: Counter[str]):
        self.counts = counts

    def __contains__(self, token: object) -> bool:
        return self.counts.get(token, 0) > 0  # type: ignore[call-overload]


def _line_memo(count: Callable[[str], int]) -> Callable[[str], int]:
    """``count`` remembering each memory line's tokens, where that keeps counts exact (OpenAI encodings)."""
    from lyra_lab.backends import LineMemoCounter, TokenCounter

    if isinstance(count, TokenCounter) and count.tokenize is None:
        return LineMemoCounter(count)
    return count


class _Metered:
    """A ``MeteredEmbedder`` made on first use: a recaller that embeds nothing never loads the embedder."""

    def __init__(self, embedder: Any, meter: PhaseMeter):
        self._embedder = embedder
        self._meter = meter
        self._metered: MeteredEmbedder | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if self._metered is None:
            self._metered = MeteredEmbedder(self._embedder, self._meter)
        return getattr(self._metered, name)


class _QueryMemo:
    """An embedder that embeds each query once: the deeper budget ranking reuses the first call's vector."""

    def __init__(self, inner: Any):
        self._inner = inner
        self._queries: dict[tuple[str, ...], Any] = {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._inner, name)

    def identity(self) -> Mapping[str, Any]:
        """The inner embedder's: a remembered query vector is the one it gave."""
        return self._inner.identity()

    def embed(self, texts: Any, kind: str = "passage") -> Any:
        if kind != "query":
            return self._inner.embed(texts, kind=kind)
        key = tuple(texts)
        if key not in self._queries:
            self._queries[key] = self._inner.embed(texts, kind=kind)
        return self._queries[key]


class ProbeAsker:
    """Runs the recallers for probes against ``store`` (owner thread only)."""

    def __init__(self, store: MemoryStore, conversation_id: str, pipeline: Any, recallers: Mapping[str, Any],
                 embedder: Any, k: int, count: Callable[[str], int], emit: Callable[..., None],
                 depth: int = BUDGET_DEPTH):
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        self.depth = depth
        self.store = store
        self.conversation_id = conversation_id
        self.pipeline = pipeline
        self.recallers = recallers
        self.meters = {label: PhaseMeter() for label in recallers}
        self.embedders = {label: _Metered(embedder, self.meters[label]) if embedder is not None else None
                          for label in recallers}
        self.k = k
        self.count = _line_memo(count)
        self.emit = emit
        self.tally = MemoryTally(store, conversation_id, self.count)
        self._snapshot: tuple[int, str, int, int] | None = None  # (version, text, tokens, entries)

    def memory_snapshot(self) -> tuple[str, int, int]:
        """``(rendered memory, entry count, its tokens)`` of the conversation, cached per store version."""
        if self._snapshot is None or self._snapshot[0] != self.store.version:
            self.tally.sync()
            entries = self.store.entries(self.conversation_id)
            text = self.tally.render(entries)
            self._snapshot = (self.store.version, text, self.tally.memory_tokens(entries), len(entries))
        _, text, tokens, n = self._snapshot
        return text, n, tokens

    def ask(self, probe: Probe, now: datetime) -> dict[str, ProbeOutcome]:
        from lyra_lab.memory import fit_context

        memory_text, n_entries, memory_tokens = self.memory_snapshot()
        answer_recall = self.tally.answer_recall(probe.answer)
        n_relevant = self.tally.relevant_entries(probe.evidence)
        # Every recaller's timed top-k call first, each after the indexes forget their last query,
        # then the deeper rankings, which reuse what the indexes remember of this query.
        timed = {label: self._timed_recall(label, recaller, probe, now) for label, recaller in self.recallers.items()}
        out: dict[str, ProbeOutcome] = {}
        for label, recaller in self.recallers.items():
            embedder, hits, latency = timed[label]
            ranking: Sequence[Any] = hits
            if self.depth > self.k and len(hits) == self.k:  # fewer than k: the memory has no more to give
                # Its hits are built only as scoring reads them (``RankedHits``), where the recaller allows it.
                deep = getattr(recaller, "ranked_hits", None) or recaller.recall
                ranking = deep(self.store, probe.question, self.depth, conversation_id=self.conversation_id,
                               embedder=embedder, now=now)
                ranking = ranking if isinstance(ranking, RankedHits) else tuple(ranking)
            # recall's render(hits, budget, count), and count() of it
            context, _, context_tokens = fit_context([h.entry for h in hits], self.pipeline.context_budget,
                                                     self.count)
            out[label] = ProbeOutcome(
                probe=probe, hits=hits, context=context, context_tokens=context_tokens,
                recall_latency_s=latency, memory_text=memory_text, memory_entries=n_entries,
                memory_tokens=memory_tokens, meta={"recaller": label, "now": now.isoformat()},
                memory_answer_recall=answer_recall, n_relevant=n_relevant, ranking=ranking, count=self.count,
            )
            self.emit("recall", probe_id=probe.id, recaller=label, now=now, latency_s=round(latency, 6),
                      context_tokens=context_tokens,
                      hits=[[h.entry.id, round(float(h.score), 6)] for h in hits])
        return out

    def _timed_recall(self, label: str, recaller: Any, probe: Probe,
                      now: datetime) -> tuple[_QueryMemo | None, tuple[Any, ...], float]:
        """``(embedder, hits, latency)`` of the recaller's top-k call, timed as a user's first ask of the query:
        the indexes forget what an earlier call remembered of it (``recall.forget_queries``)."""
        embedder = None if self.embedders[label] is None else _QueryMemo(self.embedders[label])
        forget_queries(self.store)
        start = time.perf_counter()
        hits = tuple(recaller.recall(self.store, probe.question, self.k, conversation_id=self.conversation_id,
                                     embedder=embedder, now=now))
        return embedder, hits, time.perf_counter() - start
