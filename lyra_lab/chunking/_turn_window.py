"""``turn_window``: at most N whole turns per chunk."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from lyra_lab._params import Strategy, param
from lyra_lab.chunking._budget import Budget
from lyra_lab.chunking._registry import CHUNKERS
from lyra_lab.chunking._render import Transcript
from lyra_lab.chunking._spans import plain_spans, spans_to_chunks
from lyra_lab.chunking._types import Chunk
from lyra_lab.corpus import Turn


@CHUNKERS.register("turn_window")
@dataclass(frozen=True)
class TurnWindowChunker(Strategy):
    """At most ``max_turns`` turns per chunk; turns are never split.

    With ``respect_sessions`` (the default) a chunk also ends where a session
    ends, so no chunk mixes two sessions.  Raw text has no turns: each line is
    taken as one unit instead.

    Args:
        max_turns: the most turns (or lines, for raw text) in a chunk.
        respect_sessions: also break at session boundaries.
    """

    max_turns: int = param(8, ge=1)
    respect_sessions: bool = param(True)

    def budget(self) -> Budget:
        def units(chunk: Chunk) -> int:
            # Turns for turn input; lines for raw text (then turn_ids is empty).
            return len(chunk.turn_ids) or chunk.text.count("\n") + (not chunk.text.endswith("\n"))

        return Budget("turns", self.max_turns, units, lambda c: False)

    def chunk(self, turns: Sequence[Turn] | str) -> list[Chunk]:
        transcript = Transcript.of(turns)
        starts = transcript.turn_boundaries()
        sessions: list[str | None] = [t.session_id for t in transcript.turns] or [None] * len(starts)
        groups: list[tuple[int, int]] = []
        first = 0
        for i in range(1, len(starts) + 1):
            full = i - first == self.max_turns
            boundary = i < len(starts) and self.respect_sessions and sessions[i] != sessions[i - 1]
            if i == len(starts) or full or boundary:
                end = starts[i] if i < len(starts) else len(transcript.text)
                groups.append((starts[first], end))
                first = i
        return spans_to_chunks(transcript, plain_spans(groups))
