"""``overlap_window``: token windows whose start repeats the tail of the previous one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from lyra_lab._params import Strategy, param, param_error
from lyra_lab.chunking._budget import Budget, counter, encoding_param, token_budget
from lyra_lab.chunking._registry import CHUNKERS
from lyra_lab.chunking._render import Transcript
from lyra_lab.chunking._spans import Span, fit_suffix_start, spans_to_chunks
from lyra_lab.chunking._seams import Counts, tail_tokens
from lyra_lab.chunking._token_fit import (
    MAX_CHARS_PER_TOKEN, TextUnits, exact_seams, grow, line_counts, offsets_of, token_units,
)
from lyra_lab.chunking._types import Chunk
from lyra_lab.corpus import Turn


@CHUNKERS.register("overlap_window")
@dataclass(frozen=True)
class OverlapWindowChunker(Strategy):
    """Token windows of at most ``max_tokens``, each starting with up to ``overlap_tokens`` tokens before it.

    ``max_tokens`` includes the overlap: the tokens of the text just before the window.

    ``Chunk.overlap_chars`` is the length of that repeated prefix, so
    ``"".join(c.text[c.overlap_chars:] for c in chunks)`` is the input.  The
    overlap starts at a line start whenever the repeated tail holds one (it
    reads as whole lines), else mid-line.  New text is packed by whole lines;
    a line longer than ``max_tokens - overlap_tokens`` is cut like
    ``token_budget`` does, so overlap plus new text always fits.  If the
    overlap and the next unit cannot both fit, the overlap shrinks (to zero
    if need be): the budget wins over the overlap.  ``Chunk.turn_ids`` lists
    every turn with characters in the chunk, overlap included.

    Args:
        max_tokens: the most tokens in a chunk's whole text.
        overlap_tokens: the most tokens repeated from before; below ``max_tokens``.
    """

    max_tokens: int = param(3000, ge=1)
    overlap_tokens: int = param(200, ge=0, allowed="an integer >= 0 and below max_tokens")
    encoding: str = encoding_param()

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.overlap_tokens >= self.max_tokens:
            raise param_error(self, "overlap_tokens", self.overlap_tokens,
                              f"an integer >= 0 and below max_tokens ({self.max_tokens})")

    def budget(self) -> Budget:
        return token_budget(self.encoding, self.max_tokens)

    def chunk(self, turns: Sequence[Turn] | str) -> list[Chunk]:
        transcript = Transcript.of(turns)
        text = transcript.text
        count = line_counts(counter(self.encoding), text)
        units = token_units(text, count, self.max_tokens - self.overlap_tokens)
        offsets, counts = offsets_of(units), [count(u) for u in units]
        fit = TextUnits(text, offsets, counts)
        spans: list[Span] = []
        i = 0
        while i < len(units):
            pos = offsets[i]
            start = self._overlap_start(text, pos, offsets[i + 1], count) if spans else pos
            j = grow(fit, start, i, self.max_tokens, count)
            spans.append((start, pos, offsets[j]))
            i = j
        return spans_to_chunks(transcript, spans, count)

    def _overlap_start(self, text: str, pos: int, end: int, count: Counts) -> int:
        """Where the overlap before ``text[pos:end]`` starts: as far back as both budgets allow."""
        if self.overlap_tokens == 0:
            return pos
        lo = max(0, pos - self.overlap_tokens * MAX_CHARS_PER_TOKEN)

        def fits(tail: str) -> bool:
            return count(tail) <= self.overlap_tokens and count(tail + text[pos:end]) <= self.max_tokens

        # First guess: the start of the last overlap_tokens tokens before pos (a
        # token may start inside a multi-byte character: then drop one more).
        before = text[lo:pos]
        tokens = tail_tokens(count, text, lo, pos, self.overlap_tokens) if exact_seams(count) else count.encode(before)
        guess = None
        for k in range(self.overlap_tokens, max(self.overlap_tokens - 4, 0), -1):
            tail = count.decode(tokens[-k:])
            if tail and before.endswith(tail):
                guess = pos - len(tail)
                break
        start = fit_suffix_start(text, lo, pos, fits, guess)
        # Snapping to a line start only moves the start forward; the check guards
        # against a non-monotone seam the search could have missed.
        return start if fits(text[start:pos]) else pos
