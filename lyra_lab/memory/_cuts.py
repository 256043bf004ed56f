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
        self._at: dict[int, tuple[int, int] | None] = {}  # m -> (characters kept, count of the line)
        self._longest: dict[int, tuple[str, int] | None] = {}  # room -> answer
        self._spaces, self._tokens_at = self._space_cuts() if splits_at_spaces(count) else ([], [])
        self._first: int | None = None  # count(head + text[:j1])

    def _space_cuts(self) -> tuple[list[int], list[int]]:
        """The positions of the spaces after non-spaces in the text, and the token index at each."""
        try:
            if self.data != self.text.encode("utf-8"):
                return [], []
        except UnicodeEncodeError:  # lone surrogates: the tokenizer saw another text
            return [], []
        index = {offset: i for i, offset in enumerate(self.offsets)}
        spaces, tokens = [], []
        start = offset = 0
        for match in _SPACE_CUT.finditer(self.text):
            j = match.start()
            offset += len(self.text[start:j].encode("utf-8"))
            start = j
            i = index.get(offset)
            if i is None:  # not a token boundary: count whole lines
                return [], []
            spaces.append(j)
            tokens.append(i)
        return spaces, tokens

    def line(self, chars: int) -> str:
        return self.head + self.text[:chars] + ELLIPSIS

    def _line_count(self, chars: int) -> int:
        below = bisect_left(self._spaces, chars)  # spaces strictly inside text[:chars]
        if not below:
            return self.count(self.line(chars))
        if self._first is None:
            self._first = self.count(self.head + self.text[: self._spaces[0]])
        last = self._spaces[below - 1]
        return (self._first + self._tokens_at[below - 1] - self._tokens_at[0]
                + self.count(self.text[last:chars] + ELLIPSIS))

    def at(self, m: int) -> tuple[int, int] | None:
        """The cut after ``m`` tokens as (characters of text kept, count of its line); None where
        ``_truncate`` rejects the cut (empty, or inside a multi-byte character)."""
        if m not in self._at:
            body = self.data[: self.offsets[m]].decode("utf-8", errors="replace").rstrip()
            if not body or not self.text.startswith(body):
                self._at[m] = None
            else:
                self._at[m] = (len(body), self._line_count(len(body)))
        return self._at[m]

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
