"""Memory as text for a chat model: the whole memory (rollup budgets are measured on it) and recall's context block.

Two line forms, both ``[label] text``: ``entry_line`` labels a period digest
by its period (``[2023-W19]``) and is what ``render_memory`` joins;
``hit_line`` always labels by date range and is what ``render_context``
packs under a token budget.
"""

from __future__ import annotations

import functools
from itertools import accumulate
from datetime import datetime, timezone
from typing import Callable, Iterable, NamedTuple, Protocol, Sequence

from lyra_lab.backends import TokenCount, as_count
from lyra_lab.memory._store import MemoryEntry

ELLIPSIS = " …"  # what ends a context line cut to fit

_NEVER = datetime.min.replace(tzinfo=timezone.utc)


def memory_order(entry: MemoryEntry) -> tuple[int, datetime, datetime, str]:
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


def memory_tokens(entries: Iterable[MemoryEntry], count: TokenCount | Callable[[str], int]) -> int:
    """Tokens of ``render_memory(entries)`` under ``count``."""
    return count(render_memory(entries))


def date_label(entry: MemoryEntry) -> str:
    """``2023-05-08``, ``2023-05-08..2023-05-14`` or ``undated``, from the entry's start/end."""
    start, end = entry.start or entry.end, entry.end or entry.start
    if start is None or end is None:
        return "undated"
    a, b = start.date().isoformat(), end.date().isoformat()
    return a if a == b else f"{a}..{b}"


@functools.lru_cache(maxsize=1 << 16)
def hit_line(entry: MemoryEntry) -> str:
    """``[2023-05-08] text``: an entry as a line of a context block (its date range, never its period).

    Remembered per entry: recall renders the same memory lines probe after probe.
    """
    return hit_head(entry) + entry.text


def hit_head(entry: MemoryEntry) -> str:
    """``[2023-05-08] ``: what ``hit_line`` puts before the entry's text."""
    return f"[{date_label(entry)}] "


class ContextFit(NamedTuple):
    """A rendered context block: its text, how many entries it holds whole, and its tokens."""

    text: str
    whole: int
    tokens: int


def render_context(entries: Sequence[MemoryEntry], token_budget: int,
                   count: TokenCount | Callable[[str], int]) -> str:
    """Render entries (recall hits' entries) as one context block of at most ``token_budget`` tokens.

    One line per entry, ``[date range] text``, in the given (priority) order.
    Entries are taken whole while they fit.  The first entry that does not fit is
    **truncated** to what still fits, marked with a trailing ``" …"`` — on a
    token boundary when the counter ``decodes`` (a ``lyra_lab.backends.TokenCounter``),
    else on a word boundary — and is the last entry rendered; it is skipped if not
    even its date label fits.  So a lower-priority entry never appears while a
    higher one was cut.  The budget holds exactly for any tokenizer.
    """
    return fit_context(entries, token_budget, count).text


def fit_context(entries: Sequence[MemoryEntry], token_budget: int,
                count: TokenCount | Callable[[str], int]) -> ContextFit:
    """``render_context``'s block, with the number of entries it holds whole and its tokens."""
    return fit_contexts(entries, (token_budget,), count)[0]


def fit_contexts(entries: Sequence[MemoryEntry], budgets: Iterable[int],
                 count: TokenCount | Callable[[str], int]) -> list[ContextFit]:
    """``fit_context`` at each of ``budgets``, in the order given, from one pass over ``entries``.

    A block's count is the count of its lines joined by newlines.  When the counter's
    counts add up by line (``TokenCount.lines_add_up``: every line starts with ``[``), a
    block's count is ``count(line + "\\n")`` of each line but the last plus ``count`` of
    the last, so each line is counted once; otherwise the assembled block is counted
    for every candidate line.
    """
    counter = as_count(count)
    budgets = list(budgets)
    positive = sorted({b for b in budgets if b > 0})
    fill = _fill_additive if counter.lines_add_up else _fill_block
    fits = dict(zip(positive, fill(entries, positive, counter))) if positive else {}
    return [fits.get(budget, ContextFit("", 0, 0)) for budget in budgets]


def hit_line_counts(entry: MemoryEntry, count: TokenCount | Callable[[str], int]) -> tuple[int, int]:
    """``count(hit_line(entry))`` and ``count(hit_line(entry) + "\\n")``."""
    line = hit_line(entry)
    return count(line), count(line + "\n")


def _fill_additive(entries: Sequence[MemoryEntry], budgets: Sequence[int], count: TokenCount) -> list[ContextFit]:
    """The blocks at ``budgets`` (positive, increasing) for a counter whose counts add up line by line."""
    out: list[ContextFit] = []
    lines: list[str] = []
    with_nl = tokens = 0  # count(block + "\n"), count(block)
    for entry in entries:
        line = hit_line(entry)
        n = count(line)
        while len(out) < len(budgets) and with_nl + n > budgets[len(out)]:
            cut = _truncate(hit_head(entry), entry.text, budgets[len(out)] - with_nl, count)
            if cut is None:
                out.append(ContextFit("\n".join(lines), len(lines), tokens))
            else:
                out.append(ContextFit("\n".join([*lines, cut]), len(lines), with_nl + count(cut)))
        if len(out) == len(budgets):
            return out
        lines.append(line)
        tokens, with_nl = with_nl + n, with_nl + count(line + "\n")
    block = "\n".join(lines)
    return out + [ContextFit(block, len(lines), tokens)] * (len(budgets) - len(out))


def _fill_block(entries: Sequence[MemoryEntry], budgets: Sequence[int], count: TokenCount) -> list[ContextFit]:
    """The blocks at ``budgets`` (positive, increasing), counting the assembled block for every candidate line."""
    out: list[ContextFit] = []
    block, whole = "", 0
    for entry in entries:
        candidate = block + "\n" + hit_line(entry) if block else hit_line(entry)
        while len(out) < len(budgets) and count(candidate) > budgets[len(out)]:
            prefix = block + "\n" if block else ""
            cut = _truncate(prefix + hit_head(entry), entry.text, budgets[len(out)], count)
            text = block if cut is None else cut
            out.append(ContextFit(text, whole, count(text)))
        if len(out) == len(budgets):
            return out
        block, whole = candidate, whole + 1
    return out + [ContextFit(block, whole, count(block))] * (len(budgets) - len(out))


def _truncate(prefix: str, text: str, budget: int, count: TokenCount) -> str | None:
    """The longest ``prefix + text[:cut] + ELLIPSIS`` within budget (non-empty cut), or None.

    Cuts fall on token boundaries when the counter ``decodes``, else on word boundaries.  A
    token cut inside a multi-byte character is no cut: ``fits(m)`` tries the longest clean
    head of at most ``m`` tokens, so the search sees a count that grows with ``m``.  The
    search starts where the budget left after the prefix points (``longest_cut``).
    """
    heads = _heads(text, count)

    @functools.lru_cache(maxsize=None)
    def body(m: int) -> str | None:
        head = heads.head(m).rstrip()
        return head if head and text.startswith(head) else None  # a split character decodes to U+FFFD

    @functools.lru_cache(maxsize=None)
    def fits(m: int) -> str | None:
        while m >= 1 and body(m) is None:
            m -= 1
        if m < 1:
            return None
        candidate = prefix + str(body(m)) + ELLIPSIS
        return candidate if count(candidate) <= budget else None

    # The tokens left after the prefix and the ellipsis, plus one: the prefix's trailing space
    # usually joins the cut's first word into one token.  Only where the search starts.
    guess = budget - count(prefix + ELLIPSIS) + 1
    m = longest_cut(heads.n, lambda m: fits(m) is not None, guess)
    return None if m is None else fits(m)


class _Heads(Protocol):
    """A text's heads: ``head(m)`` is the text up to its ``m``-th cut point (tokens or words), of ``n``."""

    n: int

    def head(self, m: int) -> str:
        """The text's first ``m`` pieces."""
        ...


class _TokenHeads:
    """Heads on token boundaries (read-only once built, so threads may share it)."""

    def __init__(self, text: str, count: TokenCount):
        pieces = count.token_bytes(count.encode(text))
        self.n = len(pieces)
        self._data = b"".join(pieces)
        self._ends = [0, *accumulate(map(len, pieces))]  # where each token's bytes end

    def head(self, m: int) -> str:
        """The text of the first ``m`` tokens (a cut inside a character decodes to U+FFFD)."""
        return self._data[:self._ends[m]].decode("utf-8", errors="replace")


class _WordHeads:
    """Heads on word boundaries (for counters that cannot decode)."""

    def __init__(self, text: str):
        self.words = text.split()
        self.n = len(self.words)

    def head(self, m: int) -> str:
        """The first ``m`` words, joined by single spaces."""
        return " ".join(self.words[:m])


_HEADS: dict[tuple[int, str], tuple[TokenCount, _Heads]] = {}  # (id(count), text) -> (count, heads)
_MAX_HEADS = 4096


def _heads(text: str, count: TokenCount) -> _Heads:
    """``text``'s heads by ``count``, kept for the texts cut lately: the same entries are cut again and again."""
    kept = _HEADS.get((id(count), text))
    if kept is not None and kept[0] is count:
        return kept[1]
    heads: _Heads = _TokenHeads(text, count) if count.decodes else _WordHeads(text)
    if len(_HEADS) >= _MAX_HEADS:
        _HEADS.clear()  # a bound on memory; only costs encoding again
    _HEADS[(id(count), text)] = (count, heads)
    return heads


def longest_cut(n: int, fits: Callable[[int], bool], guess: int) -> int | None:
    """The longest cut ``m`` in 1..n that fits, searched from ``guess``; None if none does.

    A count is near-monotone in the cut point, so the answer is a cut that fits while the next
    one does not: from the guess, step up while the next fits, or down until one fits, doubling
    the step and then bisecting the last step, so a good guess costs two or three counts.
    """
    if n < 1:
        return None
    m = min(max(guess, 1), n)
    if fits(m):
        lo, hi = m, n + 1  # lo fits; look for the first cut above it that does not
        step = 1
        while lo + step <= n and fits(lo + step):
            lo += step
            step *= 2
        hi = min(lo + step, n + 1)
    else:
        hi, lo = m, 0  # hi does not fit; look for a cut below it that does
        step = 1
        while hi - step >= 1 and not fits(hi - step):
            hi -= step
            step *= 2
        lo = max(hi - step, 0)
        if lo == 0 and not fits(1):
            return None
        if lo == 0:
            lo = 1
    while hi - lo > 1:  # lo fits, hi does not (or is past the end)
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo
