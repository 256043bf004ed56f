"""The memory store that pipelines write and recallers read, and memory rendered as text for a model."""

from lyra_lab.memory._render import (
    ELLIPSIS, ContextFit, date_label, entry_line, fit_context, fit_contexts, hit_line, hit_line_counts,
    memory_order, memory_tokens, render_context, render_memory,
)
from lyra_lab.memory._store import CONDENSED_KINDS, VERBATIM_KINDS, EntryKind, MemoryEntry, MemoryStore

__all__ = [
    "CONDENSED_KINDS",
    "ELLIPSIS",
    "ContextFit",
    "VERBATIM_KINDS",
    "EntryKind",
    "MemoryEntry",
    "MemoryStore",
    "date_label",
    "entry_line",
    "fit_context",
    "fit_contexts",
    "hit_line",
    "hit_line_counts",
    "memory_order",
    "memory_tokens",
    "render_context",
    "render_memory",
]
