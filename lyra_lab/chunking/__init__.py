"""Chunkers: split a conversation's transcript into ordered chunks that keep turn ids.

Every chunker splits the same canonical transcript (``render_turns``), so
``"".join(c.text[c.overlap_chars:] for c in chunks)`` restores it exactly and
each chunk names the turns it holds.  Build one by name::

    CHUNKERS.build({"name": "token_budget", "max_tokens": 2000})
"""

from lyra_lab.chunking._adaptive import DECISIONS, AdaptiveChunker, ChunkPlan
from lyra_lab.chunking._budget import Budget
from lyra_lab.chunking._line_budget import LineBudgetChunker
from lyra_lab.chunking._overlap_window import OverlapWindowChunker
from lyra_lab.chunking._registry import CHUNKERS
from lyra_lab.chunking._render import Transcript, render_turn, render_turns, split_lines
from lyra_lab.chunking._token_budget import TokenBudgetChunker
from lyra_lab.chunking._turn_window import TurnWindowChunker
from lyra_lab.chunking._types import Chunk, Chunker

__all__ = [
    "CHUNKERS",
    "DECISIONS",
    "AdaptiveChunker",
    "Budget",
    "Chunk",
    "ChunkPlan",
    "Chunker",
    "LineBudgetChunker",
    "OverlapWindowChunker",
    "TokenBudgetChunker",
    "Transcript",
    "TurnWindowChunker",
    "render_turn",
    "render_turns",
    "split_lines",
]
