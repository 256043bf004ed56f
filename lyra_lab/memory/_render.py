"""Memory as text for a chat model: the whole memory (rollup budgets are measured on it) and recall's context block.

Two line forms, both ``[label] text``: ``entry_line`` labels a period digest
by its period (``[2023-W19]``) and is what ``render_memory`` joins;
``hit_line`` always labels by date range and is what ``render_context``
packs under a token budget.
"""

from __future__ import annotations

import functools
import threading
import weakref
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, NamedTuple, Sequence

from lyra_lab.memory._cuts import ELLIPSIS, Cuts, line_counts, longest_cut
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


def date_label(entry: MemoryEntry) -> str:
    """``2023-05-08``, ``2023-05-08..2023-05-14`` or ``undated``, from the entry's start/end."""
    start, end = entry.start or entry.end, entry.end or entry.start
    if start is None or end is None:
        return "undated"
    a, b = start.date().isoformat(), end.date().isoformat()
    return a if a == b else f"{a}..{b}"


def hit_line(entry: MemoryEntry) -> str:
    """``[2023-05-08] text``: an entry as a line of a context block (its date range, never its period)."""
    return hit_head(entry) + entry.text


def hit_head(entry: MemoryEntry) -> str:
    """``[2023-05-08] ``: what ``hit_line`` puts before the entry's text."""
    return f"[{date_label(entry)}] "


class ContextFit(NamedTuple):
    """A rendered context block: its text, how many entries it holds whole, and its tokens."""

    text: str
    whole: int
    tokens: int


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
    if token_budget > 0 and not getattr(count, "line_additive", False):
        return _fit_block(entries, token_budget, count)[0]
    return fit_context(entries, token_budget, count).text


def fit_context(entries: Sequence[MemoryEntry], token_budget: int, count: Callable[[str], int]) -> ContextFit:
    """``render_context``'s block, with the number of entries it holds whole and ``count`` of it.

    A counter whose counts add up line by line (``line_additive``, e.g.
    ``lyra_lab.backends.LineMemoCounter``) is served by a renderer that counts
    each entry's line once and each truncation point of an entry once, for as
    long as the counter lives: the same block, the same counts, without
    re-counting the block for every candidate line.
    """
    if token_budget <= 0:
        return ContextFit("", 0, 0)
    if getattr(count, "line_additive", False):
        return _renderer(count).fit(entries, token_budget)
    block, whole = _fit_block(entries, token_budget, count)
    return ContextFit(block, whole, count(block))


def fit_contexts(entries: Sequence[MemoryEntry], budgets: Iterable[int],
                 count: Callable[[str], int]) -> list[ContextFit]:
    """``fit_context`` at each of ``budgets``, in the order given.

    For a ``line_additive`` counter the budgets are filled in one pass over
    ``entries``, each line counted once per counter (see ``fit_context``).
    """
    budgets = list(budgets)
    if not getattr(count, "line_additive", False):
        return [fit_context(entries, budget, count) for budget in budgets]
    positive = sorted({budget for budget in budgets if budget > 0})
    fits = dict(zip(positive, _renderer(count).fit_all(entries, positive)))
    return [fits.get(budget, ContextFit("", 0, 0)) for budget in budgets]


def hit_line_counts(entry: MemoryEntry, count: Callable[[str], int]) -> tuple[int, int]:
    """``count(hit_line(entry))`` and ``count(hit_line(entry) + "\n")``.

    For a ``line_additive`` counter these are the counts the context renderer keeps for the entry
    (see ``fit_context``): counting a memory's lines here once serves every context they enter.
    """
    if getattr(count, "line_additive", False):
        _, _, n, n_nl, _ = _renderer(count).line(entry)
        return n, n_nl
    line = hit_line(entry)
    return count(line), count(line + "\n")


def _fit_block(entries: Sequence[MemoryEntry], token_budget: int, count: Callable[[str], int]) -> tuple[str, int]:
    """The block and its whole entries, counting the assembled block for every candidate line."""
    block, whole = "", 0
    for entry in entries:
        line = hit_line(entry)
        candidate = block + "\n" + line if block else line
        if count(candidate) <= token_budget:
            block, whole = candidate, whole + 1
            continue
        prefix = (block + "\n" if block else "") + hit_head(entry)
        cut = _truncate(prefix, entry.text, token_budget, count)
        if cut is not None:
            block = cut
        break
    return block, whole


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

    @functools.lru_cache(maxsize=None)
    def fits(m: int) -> str | None:
        try:
            body = head(m).rstrip()
        except Exception:  # some decoders raise on a cut inside a multi-byte character
            return None
        if not body or (by_tokens and not text.startswith(body)):
            return None  # by_tokens: a cut inside a multi-byte character decodes to U+FFFD
        candidate = prefix + body + ELLIPSIS
        return candidate if count(candidate) <= budget else None

    m = longest_cut(len(pieces), lambda m: fits(m) is not None)
    return None if m is None else fits(m)


# One renderer per counter, living as long as it (a counter serves one conversation's replay and scoring).
_RENDERERS: "weakref.WeakKeyDictionary[Any, _AdditiveRenderer]" = weakref.WeakKeyDictionary()
_RENDERERS_LOCK = threading.Lock()  # cells on threads each have their own counter, but share this map


def _renderer(count: Any) -> "_AdditiveRenderer":
    with _RENDERERS_LOCK:
        renderer = _RENDERERS.get(count)
        if renderer is None:
            renderer = _RENDERERS[count] = _AdditiveRenderer(count)
    return renderer


class _AdditiveRenderer:
    """``fit_context`` for a ``line_additive`` counter that can ``encode`` and give ``token_bytes``.

    The block's count is ``count(block + "\n")`` of the lines so far plus the next
    line's count (every line starts with ``[``), so each entry's line is counted
    once (memo by entry id, checked by identity), and a truncation tries each cut
    of an entry's text once whatever the room left (``Cuts``: ``_truncate``'s
    search, same candidates, same result).  Several budgets are filled in one
    pass over the ranking, in increasing order: a larger budget stops at the same
    entry or a later one.
    """

    def __init__(self, count: Any):
        self.count = count
        # id -> (entry, line, count, count + "\n", the text's tokens if counting it needed them)
        self._lines: dict[str, tuple[MemoryEntry, str, int, int, Sequence[int] | None]] = {}
        self._cuts: dict[tuple[str, str], Cuts] = {}  # (head, text) -> its cuts

    def line(self, entry: MemoryEntry) -> tuple[MemoryEntry, str, int, int, Sequence[int] | None]:
        got = self._lines.get(entry.id)
        if got is None or got[0] is not entry:
            head = hit_head(entry)
            got = self._lines[entry.id] = (entry, head + entry.text, *line_counts(self.count, head, entry.text))
        return got

    def fit(self, entries: Sequence[MemoryEntry], budget: int) -> ContextFit:
        return self.fit_all(entries, (budget,))[0]

    def fit_all(self, entries: Sequence[MemoryEntry], budgets: Sequence[int]) -> list[ContextFit]:
        """``fit`` at each of ``budgets`` (positive, in increasing order)."""
        out: list[ContextFit] = []
        lines: list[str] = []
        with_nl = tokens = 0  # count(block + "\n"), count(block)
        for entry in entries:
            _, line, n, n_nl, _ = self.line(entry)
            while len(out) < len(budgets) and with_nl + n > budgets[len(out)]:
                out.append(self._cut(lines, with_nl, tokens, entry, budgets[len(out)]))
            if len(out) == len(budgets):
                return out
            lines.append(line)
            tokens, with_nl = with_nl + n, with_nl + n_nl
        block = "\n".join(lines)
        return out + [ContextFit(block, len(lines), tokens)] * (len(budgets) - len(out))

    def _cut(self, lines: list[str], with_nl: int, tokens: int, entry: MemoryEntry, budget: int) -> ContextFit:
        """The block of ``lines`` closed by ``entry`` cut to the room left, if any cut of it fits."""
        _, line, _, _, encoded = self.line(entry)
        head = line[: len(line) - len(entry.text)]  # "[date range] "
        cuts = self._cuts.get((head, entry.text))
        if cuts is None:
            cuts = self._cuts[(head, entry.text)] = Cuts(self.count, head, entry.text, encoded)
        cut = cuts.longest(budget - with_nl)
        if cut is not None:
            return ContextFit("\n".join([*lines, cut[0]]), len(lines), with_nl + cut[1])
        return ContextFit("\n".join(lines), len(lines), tokens)
