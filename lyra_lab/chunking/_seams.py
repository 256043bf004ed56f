"""Token ids at a text's head or tail without encoding all of it, exactly.

The OpenAI pre-tokenizers always split at the backends' safe cuts (after a
newline followed by a character other than whitespace and ``/``, or before a
space that follows a non-space character), and BPE never merges across a
split, so ``encode(a + b) == encode(a) + encode(b)`` when ``a + b`` has a safe
cut at ``len(a)``.  The first ``k`` tokens of a long text are therefore those
of a head ending at a safe cut, once that head holds ``k`` tokens; likewise
for the last ``k``.  Heads and tails grow by doubling, so the cost is that of
the tokens wanted, not of the whole window.

Only for texts with no blind cut (``blind_free``): there the counter's own
encoding is the plain BPE one, piece by piece.
"""

from __future__ import annotations

from typing import Protocol, Sequence

from lyra_lab.backends import PIECE_CHARS, SAFE_CUT

# A first head or tail of this many characters per token wanted (most tokens are 3-5 characters).
_CHARS_PER_TOKEN_GUESS = 8


class Counts(Protocol):
    """What the chunkers ask of a token counter: counts, and token ids to cut text at."""

    def __call__(self, text: str) -> int:
        """The number of tokens of ``text``."""
        ...

    def encode(self, text: str) -> Sequence[int]:
        """The token ids of ``text``."""
        ...

    def decode(self, tokens: Sequence[int]) -> str:
        """The text of ``tokens``."""
        ...


def blind_free(text: str) -> bool:
    """No stretch of ``text`` long enough to get a blind cut when encoded in pieces."""
    last = 0
    for match in SAFE_CUT.finditer(text):
        if match.start() - last > PIECE_CHARS // 2:
            return False
        last = match.start()
    return len(text) - last <= PIECE_CHARS // 2


def head_tokens(count: Counts, text: str, need: int) -> Sequence[int]:
    """A prefix of ``count.encode(text)`` with at least ``need`` tokens (all of them if fewer)."""
    size = max(need, 1) * _CHARS_PER_TOKEN_GUESS
    while size < len(text):
        cut = SAFE_CUT.search(text, size)
        if cut is None or cut.start() >= len(text):
            break
        tokens = count.encode(text[:cut.start()])
        if len(tokens) >= need:
            return tokens
        size = 2 * cut.start()
    return count.encode(text)


def tail_tokens(count: Counts, text: str, lo: int, end: int, need: int) -> Sequence[int]:
    """A suffix of ``count.encode(text[lo:end])`` with at least ``need`` tokens (all of them if fewer)."""
    size = max(need, 1) * _CHARS_PER_TOKEN_GUESS
    while end - size > lo:
        # The first safe cut at least ``size`` characters before ``end``, searched back from there.
        window = max(lo + 1, end - 2 * size)
        cut = None
        for match in SAFE_CUT.finditer(text, window, end - size + 1):
            cut = match.start()
        if cut is not None and lo < cut < end:
            tokens = count.encode(text[cut:end])
            if len(tokens) >= need:
                return tokens
        size *= 2
    return count.encode(text[lo:end])
