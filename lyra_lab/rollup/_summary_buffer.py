"""The summary buffer: newest entries verbatim, everything older folded into one running summary.

The classic ``ConversationSummaryBufferMemory`` shape: a buffer of recent
turns under a token limit, and a single summary (kind ``summary``) that
absorbs whatever falls out of the buffer.  The summary keeps one id per
conversation, is replaced on every fold, and its ``turn_ids`` only grow.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Sequence

from lyra_lab.memory import EntryKind, MemoryEntry, render_memory
from lyra_lab.rollup import _prompts
from lyra_lab.rollup._base import ROLLUPS, BaseRollup, Compaction, Edit, Written, condensed, skip, transcript
from lyra_lab._params import param

_NEVER = datetime.min.replace(tzinfo=timezone.utc)


def summary_id(conversation_id: str) -> str:
    return f"summary:{conversation_id}"


@ROLLUPS.register("summary_buffer")
@dataclass(frozen=True)
class SummaryBuffer(BaseRollup):
    """Keep the newest entries under a token limit; fold the pruned ones into a running summary.

    Args:
        max_buffer_tokens: the limit on the verbatim buffer; ``None`` means
            whatever the budget leaves after the summary.  The buffer is
            always held under ``budget - summary tokens`` too, so the whole
            memory fits the budget.
        max_tokens: the completion limit of each summary call.

    It runs when the memory exceeds ``budget`` or the buffer exceeds
    ``max_buffer_tokens``.  If the summary alone outgrows the budget it is
    dropped (its turns reported in ``dropped``).  A failed LLM call changes
    nothing and the report carries ``error``.
    """

    max_buffer_tokens: int | None = param(None, ge=0)
    max_tokens: int = param(200, ge=1)

    def step(self, compaction: Compaction) -> Edit:
        store, before, request = compaction.store, compaction.before, compaction.request
        budget, count = request.budget, request.count
        sid = summary_id(compaction.conversation_id)
        summary = store.get(sid) if sid in store else None
        buffer = sorted((e for e in before if e.id != sid), key=lambda e: (e.end or e.start or _NEVER))
        if not self._needs_fold(summary, buffer, budget, count):
            return skip("within limits")
        while buffer and self._needs_fold(summary, buffer, budget, count):
            summary_tokens = count(render_memory([summary])) if summary else 0
            limit = max(0, budget - summary_tokens - 1)  # 1: the newline joining summary and buffer
            if self.max_buffer_tokens is not None:
                limit = min(limit, self.max_buffer_tokens)
            cut = max(1, _oldest_to_prune(buffer, limit, count))  # always fold at least one
            summary = self._fold(summary, buffer[:cut], sid, compaction)
            buffer = buffer[cut:]
        reason = "folded"
        if summary is not None and count(render_memory([summary, *buffer])) > budget:
            summary, reason = None, "summary outgrew the budget and was dropped"
        # The new summary (if any) replaces the old one under the same id: remove, then add.
        written = [summary] if summary is not None and compaction.calls else []
        keep = {e.id for e in buffer} | ({sid} if summary is not None and not written else set())
        return Edit(reason, add=written, remove=[e.id for e in before if e.id not in keep])

    def _needs_fold(self, summary: MemoryEntry | None, buffer: Sequence[MemoryEntry], budget: int,
                    count: Callable[[str], int]) -> bool:
        if count(render_memory([*([summary] if summary else []), *buffer])) > budget:
            return True
        return self.max_buffer_tokens is not None and count(render_memory(buffer)) > self.max_buffer_tokens

    def _fold(self, summary: MemoryEntry | None, pruned: Sequence[MemoryEntry], sid: str,
              compaction: Compaction) -> MemoryEntry:
        prompt = _prompts.SUMMARY.format(summary=summary.text if summary else "(empty)",
                                         content=transcript(pruned))
        completion = compaction.ask(prompt, self.max_tokens, f"summary fold of {len(pruned)} entries")
        sources = [*([summary] if summary else []), *pruned]
        meta = {"rollup": "summary_buffer", "folds": int(summary.meta.get("folds", 0)) + 1 if summary else 1,
                "model": completion.model}
        written = Written(sid, pruned[0].conversation_id, EntryKind.SUMMARY, completion.text.strip(), meta)
        return condensed(written, sources, session_ids=tuple(sorted({s for e in sources for s in e.session_ids})),
                         either_end=True)  # a summary spans what it folded, dated by either end


def _oldest_to_prune(buffer: Sequence[MemoryEntry], limit: int, count: Callable[[str], int]) -> int:
    """How many of the oldest entries must leave so the rest renders within ``limit`` tokens."""
    lo, hi = 0, len(buffer)
    while lo < hi:
        mid = (lo + hi) // 2
        if count(render_memory(buffer[mid:])) <= limit:
            hi = mid
        else:
            lo = mid + 1
    while lo < len(buffer) and count(render_memory(buffer[lo:])) > limit:
        lo += 1
    return lo

