"""The context block a chat model gets from recall: dated hits, in priority order, within budget."""

from __future__ import annotations

from typing import Callable, Sequence

from lyra_lab.memory import MemoryEntry
from lyra_lab.recall._types import Hit

ELLIPSIS = " …"


def date_label(entry: MemoryEntry) -> str:
    """``2023-05-08``, ``2023-05-08..2023-05-14`` or ``undated``, from the entry's start/end."""
    start, end = entry.start or entry.end, entry.end or entry.start
    if start is None or end is None:
        return "undated"
    a, b = start.date().isoformat(), end.date().isoformat()
    return a if a == b else f"{a}..{b}"


def hit_line(entry: MemoryEntry) -> str:
    return f"[{date_label(entry)}] {entry.text}"


def render(hits: Sequence[Hit], token_budget: int, count: Callable[[str], int]) -> str:
    """Render hits as one context block of at most ``token_budget`` tokens (by ``count``).

    One line per hit, ``[date range] text``, in the given (priority) order.
    Hits are taken whole while they fit.  The first hit that does not fit is
    **truncated** to what still fits, marked with a trailing ``" …"`` — on a
    token boundary when ``count`` can ``encode``/``decode`` (a
    ``lyra_lab.backends.TokenCounter``), else on a word boundary — and is the
    last hit rendered; it is skipped if not even its date label fits.  So a
    lower-priority hit never appears while a higher one was cut.

    The budget is checked on the assembled block itself, so it holds exactly
    for any tokenizer (BPE counts of joined lines are not sums of line counts).
    """
    if token_budget <= 0:
        return ""
    block = ""
    for hit in hits:
        line = hit_line(hit.entry)
        candidate = block + "\n" + line if block else line
        if count(candidate) <= token_budget:
            block = candidate
            continue
        prefix = (block + "\n" if block else "") + f"[{date_label(hit.entry)}] "
        cut = _truncate(prefix, hit.entry.text, token_budget, count)
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
