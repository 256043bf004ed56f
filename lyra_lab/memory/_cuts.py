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
whose encoding does not split at those spaces (it always does for these
encodings; the check keeps the fallback honest) or a cut before the first such
space counts the whole line.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from itertools import accumulate
from typing import Any, Callable

ELLIPSIS = " …"
# Encodings whose pre-tokenizer always splits before a space that follows a non-space (module docstring).
SPACE_SPLIT_ENCODINGS = frozenset({"cl100k_base", "o200k_base"})
_SPACE_CUT = re.compile(r"(?<=\S) ")  # Python's \s is str.isspace: a superset of the tokenizers' \s


def splits_at_spaces(count: Any) -> bool:
    """Whether ``count`` is an OpenAI-encoding counter whose counts add up over spaces after non-spaces."""
    return getattr(count, "tokenize", True) is None and getattr(count, "encoding", None) in SPACE_SPLIT_ENCODINGS


class Cuts:
    """One entry's truncated lines ``head + text[:cut] + ELLIPSIS`` by token cut, each counted once."""

    def __init__(self, count: Any, head: str, text: str):
        self.count, self.head, self.text = count, head, text
        parts = count.token_bytes(count.encode(text))
        self.data = b"".join(parts)
        self.offsets = list(accumulate((len(b) for b in parts), initial=0))
        self._ascii = text.isascii() and self.data == text.encode("ascii")  # bytes are characters
        self._at: dict[int, tuple[int, int] | None] = {}  # m -> (characters kept, count of the line)
        self._longest: dict[int, tuple[str, int] | None] = {}  # room -> answer
        # Spaces after non-spaces at token boundaries (and the text's end), by position, with the token index.
        self._bounds = self._space_bounds() if splits_at_spaces(count) else {}
        self._positions = sorted(self._bounds)
        self._first = 0  # count(head + text[:first bound]) + count(ELLIPSIS), once needed

    def _space_bounds(self) -> dict[int, int]:
        text, offsets = self.text, self.offsets
        if self._ascii:
            bounds = {o: i for i, o in enumerate(offsets[1:-1], start=1) if text[o] == " " and not text[o - 1].isspace()}
        else:
            try:
                if self.data != text.encode("utf-8"):
                    return {}
            except UnicodeEncodeError:  # lone surrogates: the tokenizer saw another text
                return {}
            index = {offset: i for i, offset in enumerate(offsets)}
            bounds, start, offset = {}, 0, 0
            for match in _SPACE_CUT.finditer(text):
                j = match.start()
                offset += len(text[start:j].encode("utf-8"))
                start = j
                if offset in index:  # (always, for these encodings)
                    bounds[j] = index[offset]
        if text and not text[-1].isspace():  # the last piece ends the text: its tokens end the encoding
            bounds[len(text)] = len(offsets) - 1
        return bounds

    def line(self, chars: int) -> str:
        return self.head + self.text[:chars] + ELLIPSIS

    def _line_count(self, chars: int) -> int:
        """``count(self.line(chars))``, adding up pieces between spaces that follow non-spaces (module docstring)."""
        positions = self._positions
        below = bisect_left(positions, chars)  # bounds strictly inside text[:chars]
        at = self._bounds.get(chars)
        if not below and at is None:
            return self.count(self.line(chars))
        first = positions[0]
        if not self._first:
            self._first = self.count(self.head + self.text[:first]) + self.count(ELLIPSIS)
        if at is not None:  # the cut ends a piece: its tokens are the text's
            return self._first + at - self._bounds[first]
        last = positions[below - 1]
        return self._first + self._bounds[last] - self._bounds[first] + self.count(self.text[last:chars])

    def at(self, m: int) -> tuple[int, int] | None:
        """The cut after ``m`` tokens as (characters of text kept, count of its line); None where
        ``_truncate`` rejects the cut (empty, or inside a multi-byte character)."""
        if m in self._at:
            return self._at[m]
        if self._ascii:
            chars = len(self.text[: self.offsets[m]].rstrip())
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
