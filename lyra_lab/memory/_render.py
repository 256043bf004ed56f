"""Memory as text for a chat model: the whole memory (rollup budgets are measured on it) and recall's context block.

Two line forms, both ``[label] text``: ``entry_line`` labels a period digest
by its period (``[2023-W19]``) and is what ``render_memory`` joins;
``hit_line`` always labels by date range and is what ``render_context``
packs under a token budget.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable, Iterable, Sequence

from lyra_lab.memory._store import MemoryEntry

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


ELLIPSIS = " …"


def date_label(entry: MemoryEntry) -> str:
    """``2023-05-08``, ``2023-05-08..2023-05-14`` or ``undated``, from the entry's start/end."""
    start, end = entry.start or entry.end, entry.end or entry.start
    if start is None or end is None:
        return "undated"
    a, b = start.date().isoformat(), end.date().isoformat()
    return a if a == b else f"{a}..{b}"


def hit_line(entry: MemoryEntry) -> str:
    """``[2023-05-08] text``: an entry as a line of a context block (its date range, never its period)."""
    return f"[{date_label(entry)}] {entry.text}"


def render_context(entries: Sequence[MemoryEntry], token_budget: int, count: Callable[[str], int]) -> str:
    """Render entries (recall hits' entries) as one context block of at most ``token_budget`` tokens.

    One line per entry, ``[date range] text``, in the given (priority) order.
    Entries are taken whole while they fit.  The first entry that does not fit is
    **truncated** to what still fits, marked with a trailing ``" …"`` — on a
    token boundary when ``count`` can ``encode``/``decode`` (a
    ``lyra_lab.backends.TokenCounter``), else on a word boundary — and is the
    last entry rendered; it is skipped if not even its date label fits.  So a
    lower-priority entry never appears while a higher one was cut.

    The budget is checked on the assembled block itself, so it holds exactly
    for any tokenizer (BPE counts of joined lines are not sums of line counts).
    """
    if token_budget <= 0:
        return ""
    block = ""
    for entry in entries:
        line = hit_line(entry)
        candidate = block + "\n" + line if block else line
        if count(candidate) <= token_budget:
            block = candidate
            continue
        prefix = (block + "\n" if block else "") + f"[{date_label(entry)}] "
        cut = _truncate(prefix, entry.text, token_budget, count)
        if cut is not None:
            block = cut
        break
    return block


def _truncate(prefix: str, text: str, budget: int, count: Callable[[str], int]) -> str | None:
    """The longest ``prefix + text[:cut] + ELLIPSIS`` within budget (non-empty cut), or None."""
    encode = getattr(count, "encode", None)
    decode = getattr(count, "decode", None)
    by_tokens = False
    if callable(encode) and callable(decode) and getattr(count, "tokenize", None) is None:
        by_tokens = True
        pieces: Sequence[object] = list(encode(text))

        def head(m: int) -> str:
            return decode(pieces[:m])
    else:
        pieces = text.split()

        def head(m: int) -> str:
            return " ".join(pieces[:m])

    def fits(m: int) -> str | None:
        try:
            body = head(m).rstrip()
        except Exception:  # some decoders raise on a cut inside a multi-byte character
            return None
        if not body or (by_tokens and not text.startswith(body)):
            return None  # by_tokens: a cut inside a multi-byte character decodes to U+FFFD
        candidate = prefix + body + ELLIPSIS
        return candidate if count(candidate) <= budget else None

    lo, hi = 0, len(pieces)  # invariant: answer in [lo, hi]; counts are near-monotone in m
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid) is not None:
            lo = mid
        else:
            hi = mid - 1
    # Re-verify downwards: a BPE count is not strictly monotone in the cut point.
    for m in range(lo, 0, -1):
        candidate = fits(m)
        if candidate is not None:
            return candidate
    return None
