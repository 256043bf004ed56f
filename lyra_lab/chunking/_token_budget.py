"""``token_budget``: lines packed under an exact token budget; oversize lines are cut."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from lyra_lab._params import Strategy, param
from lyra_lab.chunking._budget import Budget, counter, encoding_param, token_budget
from lyra_lab.chunking._registry import CHUNKERS
from lyra_lab.chunking._render import Transcript
from lyra_lab.chunking._spans import plain_spans, spans_to_chunks
from lyra_lab.chunking._token_fit import line_counts, token_groups
from lyra_lab.chunking._types import Chunk
from lyra_lab.corpus import Turn


@CHUNKERS.register("token_budget")
@dataclass(frozen=True)
class TokenBudgetChunker(Strategy):
    """Split the transcript on line boundaries into chunks of at most ``max_tokens`` tokens.

    Token counts are exact and offline (``bpe-openai``), measured on each
    chunk's own text.  A line that alone exceeds the budget is *cut* into
    pieces that each fit, preferably just after a space, so every chunk fits a
    model's context: a pasted 30-page document must not become one chunk that
    no call can take.  Only a single character that alone exceeds the budget
    (possible only with tiny budgets) stands alone over it.

    Args:
        max_tokens: the most tokens a chunk may hold.
    """

    max_tokens: int = param(2000, ge=1)
    encoding: str = encoding_param()

    def budget(self) -> Budget:
        return token_budget(self.encoding, self.max_tokens)

    def chunk(self, turns: Sequence[Turn] | str) -> list[Chunk]:
        transcript = Transcript.of(turns)
        count = line_counts(counter(self.encoding), transcript.text)
        groups = token_groups(transcript.text, self.max_tokens, count)
        return spans_to_chunks(transcript, plain_spans(groups), count)
