"""``line_budget``: whole lines packed under a character budget."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from lyra_lab._params import Strategy, param
from lyra_lab.chunking._budget import Budget, single_line
from lyra_lab.chunking._registry import CHUNKERS
from lyra_lab.chunking._render import Transcript, split_lines
from lyra_lab.chunking._spans import pack, plain_spans, spans_to_chunks
from lyra_lab.chunking._types import Chunk
from lyra_lab.corpus import Turn


@CHUNKERS.register("line_budget")
@dataclass(frozen=True)
class LineBudgetChunker(Strategy):
    r"""Split the transcript on line boundaries into chunks of at most ``max_chars`` characters.

    A line is indivisible: a line longer than ``max_chars`` becomes a chunk of
    its own (over budget, alone).  A turn whose text spans several lines may
    be split between chunks; ``Chunk.turn_ids`` then lists it in each.

    Examples:
        >>> [c.text for c in LineBudgetChunker(max_chars=6).chunk("ab\ncd\nefghijk\n")]
        ['ab\ncd\n', 'efghijk\n']
    """

    max_chars: int = param(4000, ge=1, doc="the most characters in a chunk (a longer line stands alone).")

    def budget(self) -> Budget:
        return Budget("chars", self.max_chars, lambda c: len(c.text), single_line)

    def chunk(self, turns: Sequence[Turn] | str) -> list[Chunk]:
        transcript = Transcript.of(turns)
        groups = pack(split_lines(transcript.text), lambda s: len(s) <= self.max_chars)
        return spans_to_chunks(transcript, plain_spans(groups))
