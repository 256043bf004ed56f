"""Shared machinery: pack units under a budget, cut oversize units, turn spans into chunks.

Every chunker here decides *where to cut* a transcript, as character spans
``(start, new_start, end)``: the chunk's text is ``text[start:end]`` and its
first ``new_start - start`` characters repeat the previous chunk (overlap).
``spans_to_chunks`` then attaches the turn ids, session ids and time span of
the turns with characters in each span, so provenance is computed in one
place for every strategy.

Budgets are checked by measuring the candidate text itself, never by adding
up the sizes of its parts: BPE token counts are not additive (two lines can
merge into fewer tokens, or split into more, at their seam).
"""

from __future__ import annotations

from typing import Callable, Sequence

from lyra_lab.chunking._render import Transcript
from lyra_lab.chunking._types import Chunk

Fits = Callable[[str], bool]
Span = tuple[int, int, int]  # (start, new_start, end)


def pack(units: Sequence[str], fits: Fits) -> list[tuple[int, int]]:
    """Greedy: consecutive units joined while ``fits(joined)``; returns ``(start, end)`` offsets.

    A unit that does not fit alone still gets a group of its own (never dropped,
    never merged with a neighbour).
    """
    groups: list[tuple[int, int]] = []
    start = offset = 0
    current = ""
    for unit in units:
        if current and not fits(current + unit):
            groups.append((start, offset))
            start, current = offset, ""
        current += unit
        offset += len(unit)
    if current:
        groups.append((start, offset))
    return groups


def fit_prefix(text: str, fits: Fits, max_chars: int | None = None, guess: int | None = None) -> int:
    """The length of a long prefix of ``text`` that fits (at least 1 for non-empty text).

    ``guess`` (say, the end of the budget's last whole token) is taken when it
    fits; otherwise a binary search over character offsets finds the longest
    fitting prefix (token counts grow with the prefix; the result is always
    verified, so a non-monotone seam only costs a shorter cut, never an
    over-budget one).  When no single character fits, 1 is returned: a
    character is the indivisible unit.  Cuts snap back to just after a space
    when one is near, so pieces end on word boundaries.
    """
    hi = len(text) if max_chars is None else min(len(text), max_chars)
    if guess is not None and 0 < guess <= hi and fits(text[:guess]):
        lo = guess
    else:
        lo = 0
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fits(text[:mid]):
                lo = mid
            else:
                hi = mid - 1
    if lo == 0:
        return min(1, len(text))
    if lo < len(text):
        space = text.rfind(" ", 0, lo)
        if space >= 0 and space + 1 >= 0.8 * lo:
            lo = space + 1
    return lo


def split_oversize(units: Sequence[str], fits: Fits, max_chars: int | None = None,
                   guess: Callable[[str], int | None] | None = None) -> list[str]:
    """``units`` with every unit that does not fit cut into fitting pieces (see ``fit_prefix``).

    ``max_chars`` is a length no fitting piece can exceed; ``guess(rest)`` may
    propose where to cut the rest of a unit.
    """
    out: list[str] = []
    for unit in units:
        # Past max_chars a unit cannot fit, so the (costly) measure is skipped.
        while unit and ((max_chars is not None and len(unit) > max_chars) or not fits(unit)):
            window = unit if max_chars is None else unit[:max_chars]
            cut = fit_prefix(window, fits, max_chars, guess(window) if guess else None)
            out.append(unit[:cut])
            unit = unit[cut:]
        if unit:
            out.append(unit)
    return out


def fit_suffix_start(text: str, lo: int, end: int, fits: Fits, guess: int | None = None) -> int:
    """A small ``s`` in ``[lo, end]`` with ``fits(text[s:end])``, snapped to a line start.

    Used for overlap: the repeated tail of what came before.  ``guess`` is
    taken when it fits, else a binary search finds the smallest fitting ``s``.
    When the tail contains a line start, it begins there, so an overlap reads
    as whole lines; else it begins at a word when it can.
    """
    if guess is not None and lo <= guess <= end and fits(text[guess:end]):
        s = guess
    else:
        # A guess too long to fit bounds the search: the answer starts after it.
        a = guess if guess is not None and lo <= guess <= end else lo
        b = end  # invariant: fits(text[b:end]) (the empty tail fits)
        while a < b:
            mid = (a + b) // 2
            if fits(text[mid:end]):
                b = mid
            else:
                a = mid + 1
        s = b
    if 0 < s < end and text[s - 1] != "\n":
        newline = text.find("\n", s, end)
        space = text.find(" ", s, end)
        if newline != -1 and newline + 1 < end:
            s = newline + 1
        elif text[s - 1] != " " and space != -1 and space + 1 < end:
            s = space + 1  # no whole line fits: at least start at a word
    return s


def spans_to_chunks(transcript: Transcript, spans: Sequence[Span],
                    count: Callable[[str], int] | None = None) -> list[Chunk]:
    """Chunks for ``spans`` with the provenance of the turns they touch."""
    chunks = []
    for index, (start, new_start, end) in enumerate(spans):
        text = transcript.text[start:end]
        turns = transcript.turns_in(start, end)
        stamps = [t.timestamp for t in turns if t.timestamp is not None]
        chunks.append(Chunk(
            index=index,
            text=text,
            turn_ids=tuple(t.id for t in turns),
            session_ids=tuple(dict.fromkeys(t.session_id for t in turns)),
            start=min(stamps) if stamps else None,
            end=max(stamps) if stamps else None,
            tokens=count(text) if count is not None else None,
            overlap_chars=new_start - start,
        ))
    return chunks


def plain_spans(groups: Sequence[tuple[int, int]]) -> list[Span]:
    """Spans without overlap from ``(start, end)`` groups."""
    return [(start, start, end) for start, end in groups]
