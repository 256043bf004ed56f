"""One entry's truncated context lines ``[label] text[:cut] …``, cut on token boundaries, and their counts.

``render_context`` cuts the first entry that does not fit to the longest head of
its text that still fits (``_render._truncate``: a binary search over the cut
point, then a scan downwards).  ``Cuts`` serves that search for a
``line_additive`` counter: the text is encoded once, each cut is counted once
however many budgets and contexts ask for it, and the search is the same, so
the answer is the same.

Counting a cut need not encode the whole cut line.  Under the OpenAI
pre-tokenizers (``cl100k_base``, ``o200k_base``) a space that follows a
character other than whitespace always starts a new pre-token: every
alternative of their patterns matches whitespace only as its first character or
as a run of whitespace alone.  Pre-tokens are encoded independently, so a
text's count is the sum of the counts of its pieces between such spaces (the
cut ``backends.pieces`` relies on too), and a piece of the whole text between
two such spaces holds exactly the text's tokens between them.  So for a cut
line ``head + text[:p] + " …"`` (``text[:p]`` ends in a non-space: it is
right-stripped) whose text has such spaces at ``j1 < … < jl < p``:

    count(line) = count(head + text[:j1])                 # once per entry
                + tokens of encode(text) in text[j1:jl]   # a difference of token indices
                + count(text[jl:p] + " …")                # a word or two, memoized by the counter

and only that last short piece is encoded per cut.  Any other counter, a text
with lone surrogates (the tokenizer encodes a replaced text), a text whose
encoding has no token boundary at such a space (it always has, for these
encodings; the check keeps the fallback honest) or a cut before the first such
space counts the whole line.

A whole line and the line with its newline (``line_counts``) come from the
text's own encoding the same way: ``count(head + text) = count(head + text[:j1])
+ len(encode(text)) - count(text[:j1])``, and ``count(line + "\n") = count(line)
- count(last) + count(last + "\n")`` for the last piece ``last`` of the line:
one encoding of the text, kept for its cuts, and a few short pieces (a first
and a last word, which recur and the counter remembers) instead of encoding
the line twice.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from itertools import accumulate
from typing import Any, Callable, Sequence

ELLIPSIS = " …"
# Encodings whose pre-tokenizer always splits before a space that follows a non-space (module docstring).
SPACE_SPLIT_ENCODINGS = frozenset({"cl100k_base", "o200k_base"})
_SPACE_CUT = re.compile(r"(?<=\S) ")  # Python's \s is str.isspace: a superset of the tokenizers' \s


def splits_at_spaces(count: Any) -> bool:
    """Whether ``count`` is an OpenAI-encoding counter whose counts add up over spaces after non-spaces."""
    return getattr(count, "tokenize", True) is None and getattr(count, "encoding", None) in SPACE_SPLIT_ENCODINGS


def line_counts(count: Any, head: str, text: str) -> tuple[int, int, Sequence[int] | None]:
    """``count(head + text)``, ``count(head + text + "\n")`` and, where they served, the text's tokens
    (see the module docstring: the text's first and last spaces after a non-space split the line)."""
    line = head + text
    first = _SPACE_CUT.search(text)
    if first is None or not splits_at_spaces(count) or not _encodable(text):
        return count(line), count(line + "\n"), None
    tokens = count.encode(text)
    j = first.start()
    n = count(head + text[:j]) + len(tokens) - count(text[:j])
    last = text[_last_space_cut(text):]
    return n, n - count(last) + count(last + "\n"), tokens


def _last_space_cut(text: str) -> int:
    """The last position of a space after a non-space in ``text`` (there is one)."""
    i = text.rfind(" ")
    while i > 0 and text[i - 1].isspace():
        i = text.rfind(" ", 0, i)
    return i


_TOKEN_LENGTHS: dict[str, dict[int, int]] = {}  # encoding -> token id -> its length in bytes


def _token_offsets(count: Any, tokens: Sequence[int]) -> list[int]:
    """0 and the byte offset where each of ``tokens`` ends (token lengths kept per encoding)."""
    encoding = getattr(count, "encoding", None)
    lengths = _TOKEN_LENGTHS.setdefault(encoding, {}) if isinstance(encoding, str) else {}
    try:  # mostly every id is known already
        return list(accumulate(map(lengths.__getitem__, tokens), initial=0))
    except KeyError:
        missing = [t for t in set(tokens) if t not in lengths]
        lengths.update(zip(missing, count.token_lengths(missing) if hasattr(count, "token_lengths")
                           else map(len, count.token_bytes(missing))))
        return list(accumulate(map(lengths.__getitem__, tokens), initial=0))


def _space_cuts(text: str) -> list[int]:
    """The positions of ``text``'s spaces that follow a non-space (``_SPACE_CUT``'s matches).

    A printable ASCII text holds no whitespace but spaces; without a leading or a double space each of
    its spaces follows a non-space, so they are the ends of the pieces ``split(" ")`` gives.
    """
    if text.isascii() and text.isprintable() and "  " not in text and not text.startswith(" "):
        return list(accumulate(map((1).__add__, map(len, text.split(" "))), initial=-1))[1:-1]
    return [match.start() for match in _SPACE_CUT.finditer(text)]


def _encodable(text: str) -> bool:
    """Whether ``text`` is what the tokenizer encodes (not so with lone surrogates, which it replaces)."""
    try:
        return text.isascii() or bool(text.encode("utf-8"))
    except UnicodeEncodeError:
        return False


class Cuts:
    """One entry's truncated lines ``head + text[:cut] + ELLIPSIS`` by token cut, each counted once."""

    def __init__(self, count: Any, head: str, text: str, tokens: Sequence[int] | None = None):
        self.count, self.head, self.text = count, head, text
        tokens = count.encode(text) if tokens is None else tokens
        encodable = _encodable(text)
        self.offsets = _token_offsets(count, tokens)
        # The text's bytes; a text with lone surrogates was encoded as the tokenizer replaced them.
        self.data = text.encode("utf-8") if encodable else b"".join(count.token_bytes(tokens))
        self._ascii = text.isascii()  # bytes are characters
        self._at: dict[int, tuple[int, int] | None] = {}  # m -> (characters kept, count of the line)
        self._longest: dict[int, tuple[str, int] | None] = {}  # room -> answer
        # Spaces after non-spaces (and the text's end after a non-space): where pieces end.
        self._positions = _space_cuts(text) if encodable and splits_at_spaces(count) else []
        if self._positions and not text[-1].isspace():
            self._positions.append(len(text))
        self._first = 0  # count(head + text[:first position]) + count(ELLIPSIS), once needed

    def _token_at(self, chars: int) -> int | None:
        """How many of the text's tokens end by ``text[:chars]``, if one ends there (at a piece's end, always)."""
        offset = chars if self._ascii else len(self.text[:chars].encode("utf-8"))
        i = bisect_left(self.offsets, offset)
        return i if i < len(self.offsets) and self.offsets[i] == offset else None

    def line(self, chars: int) -> str:
        return self.head + self.text[:chars] + ELLIPSIS

    def _line_count(self, chars: int) -> int:
        """``count(self.line(chars))``, adding up pieces between spaces that follow non-spaces (module docstring)."""
        positions = self._positions
        below = bisect_left(positions, chars)  # piece ends strictly inside text[:chars]
        ends_piece = below < len(positions) and positions[below] == chars
        if not below and not ends_piece:
            return self.count(self.line(chars))
        split = chars if ends_piece else positions[below - 1]  # the last piece end the cut keeps
        first, upto = self._token_at(positions[0]), self._token_at(split)
        if first is None or upto is None:  # (never, for these encodings)
            return self.count(self.line(chars))
        if not self._first:
            self._first = self.count(self.head + self.text[: positions[0]]) + self.count(ELLIPSIS)
        rest = 0 if ends_piece else self.count(self.text[split:chars])
        return self._first + upto - first + rest

    def at(self, m: int) -> tuple[int, int] | None:
        """The cut after ``m`` tokens as (characters of text kept, count of its line); None where
        ``_truncate`` rejects the cut (empty, or inside a multi-byte character)."""
        if m in self._at:
            return self._at[m]
        if self._ascii:
            chars = self.offsets[m]
            while chars and self.text[chars - 1].isspace():  # len(text[:chars].rstrip())
                chars -= 1
        else:
            body = self.data[: self.offsets[m]].decode("utf-8", errors="replace").rstrip()
            chars = len(body) if self.text.startswith(body) else 0
        got = self._at[m] = (chars, self._line_count(chars)) if chars else None
        return got

    def longest(self, room: int) -> tuple[str, int] | None:
        """``_truncate``'s answer (as a line and its count) for ``room`` tokens."""
        if room not in self._longest:
            self._longest[room] = self._search(room)
        return self._longest[room]

    def _search(self, room: int) -> tuple[str, int] | None:
        def fits(m: int) -> bool:
            got = self.at(m)
            return got is not None and got[1] <= room

        m = longest_cut(len(self.offsets) - 1, fits)
        if m is None:
            return None
        chars, n = self.at(m)  # type: ignore[misc]
        return self.line(chars), n


def longest_cut(n: int, fits: Callable[[int], bool]) -> int | None:
    """The cut ``m`` in 1..n that ``render_context`` takes: a binary search for the last ``fits(m)`` (counts
    are near-monotone in ``m``), then downwards to the first that really fits; None if none does."""
    lo, hi = 0, n  # invariant: answer in [lo, hi]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    # Re-verify downwards: a BPE count is not strictly monotone in the cut point.
    for m in range(lo, 0, -1):
        if fits(m):
            return m
    return None
