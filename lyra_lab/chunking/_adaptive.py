"""``adaptive``: one call, a few parallel chunks, or must-chunk — decided by size.

The decision (from the systems lyra-lab grew from):

* ``oversize`` — the transcript exceeds ``target_tokens``: it must be chunked,
  into ``ceil(tokens / target_tokens)`` balanced token-budget chunks.
* ``preemptive`` — it fits one call, but is big enough (at least
  ``ratio × target_tokens`` tokens and ``target_chunks × min_chunk_chars``
  characters) that ``target_chunks`` parallel chunk calls plus a small merge
  finish sooner than one long serial call: split into ``target_chunks``
  balanced pieces, cut at turn starts.
* ``single_pass`` — otherwise: one chunk, one call.

``plan()`` reports the decision and why; a summarizer given the plan records
the decision in its ``strategy`` event and in ``Summary.decision``.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass
from typing import Iterator, Sequence

from lyra_lab._params import Strategy, param
from lyra_lab.chunking._budget import Budget, counter, encoding_param, token_budget
from lyra_lab.chunking._registry import CHUNKERS
from lyra_lab.chunking._render import Transcript, split_lines
from lyra_lab.chunking._spans import plain_spans, spans_to_chunks
from lyra_lab.chunking._seams import Counts
from lyra_lab.chunking._token_fit import line_counts, token_groups
from lyra_lab.chunking._types import Chunk
from lyra_lab.corpus import Turn

DECISIONS = ("single_pass", "preemptive", "oversize")


@dataclass(frozen=True)
class ChunkPlan(Sequence[Chunk]):
    """The chunks of a transcript and the decision that shaped them.

    A plan is a sequence of its chunks, so it can be handed to a summarizer
    as is (which then reports ``decision``).
    """

    decision: str
    chunks: tuple[Chunk, ...]
    reason: str
    tokens: int = 0

    def __len__(self) -> int:
        return len(self.chunks)

    def __getitem__(self, index):
        return self.chunks[index]

    def __iter__(self) -> Iterator[Chunk]:
        return iter(self.chunks)


@CHUNKERS.register("adaptive")
@dataclass(frozen=True)
class AdaptiveChunker(Strategy):
    """Choose single-pass, preemptive parallel chunks, or oversize chunking by size.

    The default ``target_tokens`` keeps a call inside the bundled local
    model's 8,192-token context: SmolLM2's tokenizer needs 1.19× the
    o200k count (measured on 200 LoCoMo turns), plus the instruction and the
    reply.  Raise it for cloud models.

    Args:
        target_tokens: the most tokens (o200k) one summarization call should take.
        ratio: the share of ``target_tokens`` from which parallel chunks pay off.
        target_chunks: how many pieces a preemptive split makes.
        min_chunk_chars: the smallest piece worth a call of its own.
    """

    target_tokens: int = param(6000, ge=1)
    ratio: float = param(0.2, ge=0, le=1)
    target_chunks: int = param(3, ge=1)
    min_chunk_chars: int = param(3000, ge=1)
    encoding: str = encoding_param()

    def budget(self) -> Budget:
        return token_budget(self.encoding, self.target_tokens)

    def chunk(self, turns: Sequence[Turn] | str) -> list[Chunk]:
        return list(self.plan(turns).chunks)

    def plan(self, turns: Sequence[Turn] | str) -> ChunkPlan:
        """The decision, the chunks it gives, and the reason in words."""
        transcript = Transcript.of(turns)
        text = transcript.text
        count = line_counts(counter(self.encoding), text)
        tokens = count(text)
        target = self.target_tokens
        if tokens > target:
            n = math.ceil(tokens / target)
            # Balanced pieces parallelise better than full ones plus a runt; 10 %
            # slack keeps the greedy packing from spilling into an extra chunk.
            per_chunk = min(target, math.ceil(1.1 * tokens / n))
            groups = token_groups(text, per_chunk, count)
            reason = f"{tokens:,} tokens > target {target:,}: must chunk ({len(groups)} chunks)"
            return ChunkPlan("oversize", _chunks(transcript, groups, count), reason, tokens)
        big_tokens = tokens >= self.ratio * target
        big_chars = len(text) >= self.target_chunks * self.min_chunk_chars
        if big_tokens and big_chars and self.target_chunks > 1:
            groups = balanced_groups(transcript, self.target_chunks)
            reason = (f"{tokens:,} tokens fit one call (≤ {target:,}) but ≥ {self.ratio:g}×target and "
                      f"{len(text):,} chars ≥ {self.target_chunks}×{self.min_chunk_chars:,}: "
                      f"{len(groups)} parallel chunks")
            return ChunkPlan("preemptive", _chunks(transcript, groups, count), reason, tokens)
        groups = [(0, len(text))] if text else []
        why = "below the ratio" if not big_tokens else "too few characters to split"
        reason = f"{tokens:,} tokens fit one call (≤ {target:,}), {why}: single pass"
        return ChunkPlan("single_pass", _chunks(transcript, groups, count), reason, tokens)


def _chunks(transcript: Transcript, groups: list[tuple[int, int]], count: Counts) -> tuple[Chunk, ...]:
    """The chunks of ``transcript`` cut at ``groups`` (``(start, end)`` offsets, no overlap)."""
    return tuple(spans_to_chunks(transcript, plain_spans(groups), count))


def balanced_groups(transcript: Transcript, n: int) -> list[tuple[int, int]]:
    """``n`` (or fewer) pieces of near-equal length, cut at turn starts when one is near.

    Each cut goes to the turn start nearest the ideal offset if that is within
    a quarter of a piece; else to the nearest line start; else (one huge line)
    at the ideal offset itself, moved back to just after a space if one is near.
    """
    text = transcript.text
    size = len(text) / n
    turn_starts = transcript.turn_boundaries()
    line_starts = [0]
    for line in split_lines(text):
        line_starts.append(line_starts[-1] + len(line))
    cuts = [0]
    for k in range(1, n):
        ideal = round(k * size)
        cut = _nearest(turn_starts, ideal, size / 4) or _nearest(line_starts, ideal, size / 4)
        if cut is None:
            space = text.rfind(" ", 0, ideal)
            cut = space + 1 if space >= 0 and ideal - space <= size / 4 else ideal
        if cuts[-1] < cut < len(text):
            cuts.append(cut)
    cuts.append(len(text))
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if a < b]


def _nearest(offsets: list[int], ideal: int, tolerance: float) -> int | None:
    """The offset nearest ``ideal`` (ties to the earlier) within ``tolerance``, else None; never 0."""
    i = bisect_left(offsets, ideal)
    near = [o for o in offsets[max(i - 1, 0): i + 1] if 0 < o and abs(o - ideal) <= tolerance]
    return min(near, key=lambda o: (abs(o - ideal), o)) if near else None
