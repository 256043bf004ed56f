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
    (``head`` ends in a space after a non-space, as ``"[label] "`` does; see the module docstring)."""
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
        parts = count.token_bytes(count.encode(text) if tokens is None else tokens)
        self.data = b"".join(parts)
        self.offsets = list(accumulate(map(len, parts), initial=0))
        self._ascii = text.isascii() and self.data == text.encode("ascii")  # bytes are characters
        self._at: dict[int, tuple[int, int] | None] = {}  # m -> (characters kept, count of the line)
        self._longest: dict[int, tuple[str, int] | None] = {}  # room -> answer
        # Spaces after non-spaces at token boundaries (and the text's end), by position, with the token index.
        self._bounds = self._space_bounds() if splits_at_spaces(count) else {}
        self._positions = sorted(self._bounds)
        self._first = 0  # count(head + text[:first bound]) + count(ELLIPSIS), once needed

    def _space_bounds(self) -> dict[int, int]:
        text = self.text
        if not self._ascii and not (_encodable(text) and self.data == text.encode("utf-8")):
            return {}  # lone surrogates: the tokenizer saw another text
        index = dict(zip(self.offsets, range(len(self.offsets))))  # byte offset -> token index
        bounds: dict[int, int] = {}
        start = offset = 0
        for match in _SPACE_CUT.finditer(text):
            j = match.start()
            if self._ascii:
                offset = j
            else:
                offset += len(text[start:j].encode("utf-8"))
                start = j
            if offset in index:  # (always, for these encodings)
                bounds[j] = index[offset]
        if text and not text[-1].isspace():  # the last piece ends the text: its tokens end the encoding
            bounds[len(text)] = len(self.offsets) - 1
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
