"""Ask one probe of the memory as it stands: every recaller, its rendered context, memory size.

The whole rendered memory (for judge-free retention) is computed once per
memory version, not once per probe × recaller: many probes are asked at the
end of a conversation, all against the same memory.

Embedding calls are metered per recaller (``embed`` phase).  Recallers that
share a dense index (``dense`` and ``hybrid`` with the same embedder) embed each
memory entry once; that indexing is charged to the first recaller that needed
it, so compare embed costs per memory pipeline, not between such recallers.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any, Callable, Mapping

from lyra_lab.corpus import Probe
from lyra_lab.memory import MemoryStore
from lyra_lab.replay._meter import MeteredEmbedder, PhaseMeter
from lyra_lab.replay._types import ProbeOutcome


class ProbeAsker:
    """Runs the recallers for probes against ``store`` (owner thread only)."""

    def __init__(self, store: MemoryStore, conversation_id: str, pipeline: Any, recallers: Mapping[str, Any],
                 embedder: Any, k: int, count: Callable[[str], int], emit: Callable[..., None]):
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        self.store = store
        self.conversation_id = conversation_id
        self.pipeline = pipeline
        self.recallers = recallers
        self.meters = {label: PhaseMeter() for label in recallers}
        self.embedders = {label: MeteredEmbedder(embedder, self.meters[label]) if embedder is not None else None
                          for label in recallers}
        self.k = k
        self.count = count
        self.emit = emit
        self._snapshot: tuple[int, str, int, int] | None = None  # (version, text, tokens, entries)

    def memory_snapshot(self) -> tuple[str, int, int]:
        """``(rendered memory, its tokens, entry count)`` of the conversation, cached per store version."""
        from lyra_lab.rollup import render_memory

        if self._snapshot is None or self._snapshot[0] != self.store.version:
            entries = self.store.entries(self.conversation_id)
            text = render_memory(entries)
            self._snapshot = (self.store.version, text, self.count(text), len(entries))
        _, text, tokens, n = self._snapshot
        return text, n, tokens

    def ask(self, probe: Probe, now: datetime) -> dict[str, ProbeOutcome]:
        from lyra_lab.recall import render

        memory_text, n_entries, memory_tokens = self.memory_snapshot()
        out: dict[str, ProbeOutcome] = {}
        for label, recaller in self.recallers.items():
            start = time.perf_counter()
            hits = tuple(recaller.recall(self.store, probe.question, self.k, conversation_id=self.conversation_id,
                                         embedder=self.embedders[label], now=now))
            latency = time.perf_counter() - start
            context = render(hits, self.pipeline.context_budget, self.count)
            context_tokens = self.count(context)
            out[label] = ProbeOutcome(
                probe=probe, hits=hits, context=context, context_tokens=context_tokens,
                recall_latency_s=latency, memory_text=memory_text, memory_entries=n_entries,
                memory_tokens=memory_tokens, meta={"recaller": label, "now": now.isoformat()},
            )
            self.emit("recall", probe_id=probe.id, recaller=label, now=now, latency_s=round(latency, 6),
                      context_tokens=context_tokens,
                      hits=[[h.entry.id, round(float(h.score), 6)] for h in hits])
        return out
