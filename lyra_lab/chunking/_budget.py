"""What a chunker promises about chunk size, in a form invariant checks can test.

Each built-in chunker has a ``budget()`` method returning a ``Budget``: the
unit (chars, tokens, turns), the limit, how to measure a chunk, and which
chunks are *atomic* — a single indivisible unit that may exceed the limit and
then must stand alone.  ``lyra_lab.testing.check_chunker`` uses it; a user's
own chunker can offer the same method to be checked the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from lyra_lab._params import param
from lyra_lab.chunking._types import Chunk

if TYPE_CHECKING:
    from lyra_lab.backends import TokenCounter


@dataclass(frozen=True)
class Budget:
    """A size promise: ``measure(chunk) <= limit`` unless ``atomic(chunk)``.

    Attributes:
        unit: what is counted (``"chars"``, ``"tokens"``, ``"turns"``).
        limit: the maximum per chunk.
        measure: the size of one chunk, in ``unit``.
        atomic: true for a chunk that is one indivisible unit (allowed over the limit).
    """

    unit: str
    limit: int
    measure: Callable[[Chunk], int]
    atomic: Callable[[Chunk], bool]

    def violations(self, chunks: list[Chunk]) -> list[str]:
        """A message for each chunk over the limit that is not atomic."""
        out = []
        for chunk in chunks:
            size = self.measure(chunk)
            if size > self.limit and not self.atomic(chunk):
                out.append(f"chunk {chunk.index} has {size} {self.unit} > limit {self.limit} "
                           f"and is not one indivisible unit: {chunk.text[:60]!r}...")
        return out


def single_line(chunk: Chunk) -> bool:
    r"""The chunk's new text is one line (at most one ``"\n"``, at its end)."""
    body = chunk.text[chunk.overlap_chars:]
    return "\n" not in body[:-1]


def single_char(chunk: Chunk) -> bool:
    """The chunk is one character (the smallest unit a token budget can cut to)."""
    return len(chunk.text) == 1


def token_budget(encoding: str, limit: int) -> Budget:
    """The budget of a token-counting chunker: at most ``limit`` tokens, a single character may exceed it."""
    count = counter(encoding)
    return Budget("tokens", limit, lambda c: count(c.text), single_char)


def encoding_param() -> str:
    """The ``encoding`` parameter of the token-counting chunkers (default ``o200k_base``)."""
    return param("o200k_base", check=_known_encoding, allowed="o200k_base, cl100k_base or an OpenAI model name",
                 doc="the BPE table (or the OpenAI model whose table) token counts use.")


def _known_encoding(encoding: str) -> bool:
    from lyra_lab.backends import encoding_name_for

    return encoding_name_for(encoding) is not None


def counter(encoding: str) -> TokenCounter:
    """An exact, offline token counter for ``encoding`` (an encoding or OpenAI model name)."""
    from lyra_lab.backends import token_counter

    return token_counter(encoding)
