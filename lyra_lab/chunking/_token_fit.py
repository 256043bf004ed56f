r"""Token-budget packing that counts exactly but rarely: estimate, then verify.

Counting a candidate chunk's whole text for every line it might take costs
O(lines × chunk) tokenizer work.  Instead each unit is counted once; a chunk
grows while the *sum* of its units' counts fits, and only then is its own
text counted exactly (BPE counts are not additive at seams, e.g. ``"!\n"`` +
``"\n"`` tokenizes as one ``"!\n\n"`` piece), shrinking or growing one unit
at a time until one more unit would not fit.  Every chunk is still checked
exactly against the limit, for a few exact counts per chunk.

Those exact counts are cheap too: ``line_counts`` remembers each line's count
(``LineMemoCounter``), so counting a chunk adds up counts already known instead of
encoding the chunk again; the counts are the counter's own, to the token.
"""

from __future__ import annotations

from itertools import accumulate
from typing import NamedTuple, Sequence

from lyra_lab.backends import LineMemoCounter, TokenCounter
from lyra_lab.chunking._render import split_lines
from lyra_lab.chunking._seams import Counts, blind_free, head_tokens
from lyra_lab.chunking._spans import split_oversize

# The longest o200k/cl100k token is 128 bytes (checked over both vocabularies),
# so no text of n tokens is longer than 128·n characters.  This bounds the
# search for a cut, so cutting a huge line stays linear in its length.
MAX_CHARS_PER_TOKEN = 128


def line_counts(count: TokenCounter, text: str) -> Counts:
    """``count`` remembering each line's count, wherever that gives ``count``'s own result on slices of ``text``.

    Lines add up exactly for the OpenAI encodings when no piece of ``text`` is
    cut blindly (``blind_free``); else the plain counter is kept, so every
    count is the one ``count`` gives.  A ``LineMemoCounter`` back also says
    that heads and tails may be encoded alone (``exact_seams``).
    """
    if not count.lines_add_up or not blind_free(text):
        return count
    return LineMemoCounter(count)


def exact_seams(count: Counts) -> bool:
    """Whether ``count`` came from ``line_counts`` with exact seams (see ``_seams``)."""
    return isinstance(count, LineMemoCounter)


def token_units(text: str, count: Counts, limit: int) -> list[str]:
    """The lines of ``text``, with every line over ``limit`` tokens cut into fitting pieces.

    With exact seams a long line is encoded only as far as its first
    ``limit + 1`` tokens to learn that it does not fit, and where to cut it.
    """
    seams = exact_seams(count)
    heads: dict[str, Sequence[int]] = {}  # the last long line's head: fits() then guess() ask for it

    def head_of(s: str) -> Sequence[int]:
        if s not in heads:
            heads.clear()
            heads[s] = head_tokens(count, s, limit + 1)
        return heads[s]

    def fits(s: str) -> bool:
        if seams and len(s) > 8 * (limit + 1):
            return len(head_of(s)) <= limit
        return count(s) <= limit

    def guess(s: str) -> int | None:
        # The end of the limit-th token, if decoding that prefix gives back text;
        # a token may end inside a multi-byte character, then step back a token.
        tokens = head_of(s) if seams else count.encode(s)
        for k in range(limit, max(limit - 4, 0), -1):
            head = count.decode(tokens[:k])
            if head and s.startswith(head):
                return len(head)
        return None

    return split_oversize(split_lines(text), fits, limit * MAX_CHARS_PER_TOKEN, guess)


def offsets_of(units: Sequence[str]) -> list[int]:
    """Start offset of each unit, plus the end of the last."""
    return list(accumulate((len(u) for u in units), initial=0))


class TextUnits(NamedTuple):
    """A text cut into units: each unit's start offset (plus the end of the last) and token count."""

    text: str
    offsets: Sequence[int]
    counts: Sequence[int]


def grow(units: TextUnits, start: int, i: int, limit: int, count: Counts) -> int:
    """The largest ``j > i`` with ``count(text[start:offsets[j]]) <= limit`` (greedy).

    Unit ``i`` is always taken (an over-limit unit stands alone).  ``start``
    may lie before ``offsets[i]`` (an overlap prefix).
    """
    text, offsets, counts = units
    n = len(counts)
    j = i + 1
    estimate = count(text[start:offsets[j]])
    while j < n and estimate + counts[j] <= limit:
        estimate += counts[j]
        j += 1
    while j > i + 1 and count(text[start:offsets[j]]) > limit:
        j -= 1
    while j < n and count(text[start:offsets[j + 1]]) <= limit:
        j += 1
    return j


def token_groups(text: str, limit: int, count: Counts) -> list[tuple[int, int]]:
    """``(start, end)`` groups of whole lines (and pieces of oversize lines) within ``limit`` tokens."""
    units = token_units(text, count, limit)
    offsets, counts = offsets_of(units), [count(u) for u in units]
    groups, i = [], 0
    while i < len(units):
        j = grow(TextUnits(text, offsets, counts), offsets[i], i, limit, count)
        groups.append((offsets[i], offsets[j]))
        i = j
    return groups
