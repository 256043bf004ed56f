"""The memory store that pipelines write and recallers read, and memory rendered as text for a model."""

from lyra_lab.memory._render import (
    ELLIPSIS, date_label, entry_line, hit_line, memory_order, memory_tokens, render_context, render_memory,
)
from lyra_lab.memory._store import CONDENSED_KINDS, VERBATIM_KINDS, EntryKind, MemoryEntry, MemoryStore

__all__ = [
    "CONDENSED_KINDS",
    "ELLIPSIS",
    "VERBATIM_KINDS",
    "EntryKind",
    "MemoryEntry",
    "MemoryStore",
    "date_label",
    "entry_line",
    "hit_line",
    "memory_order",
    "memory_tokens",
    "render_context",
    "render_memory",
]
