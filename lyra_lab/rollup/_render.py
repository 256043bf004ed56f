"""A conversation's memory as a chat model would get it; rollup budgets are measured on this text."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable, Iterable

from lyra_lab.memory import MemoryEntry
from lyra_lab.recall import date_label

_NEVER = datetime.min.replace(tzinfo=timezone.utc)


def memory_order(entry: MemoryEntry) -> tuple:
    """Coarse before fine (higher ``level`` first), then oldest first, then id for stability."""
    start = entry.start or entry.end or _NEVER
    end = entry.end or entry.start or _NEVER
    return (-entry.level, start, end, entry.id)


def entry_line(entry: MemoryEntry) -> str:
    """``[2023-W19] text`` for a period digest, ``[2023-05-08] text`` (date range) otherwise."""
    label = entry.period or date_label(entry)
    return f"[{label}] {entry.text}"


def render_memory(entries: Iterable[MemoryEntry]) -> str:
    """One line per entry: month/week/day digests and other condensed entries first, raw turns last.

    >>> render_memory([])
    ''
    """
    return "\n".join(entry_line(e) for e in sorted(entries, key=memory_order))


def memory_tokens(entries: Iterable[MemoryEntry], count: Callable[[str], int]) -> int:
    """Tokens of ``render_memory(entries)`` under ``count``."""
    return count(render_memory(entries))
