"""Rollup strategies: compact a conversation's memory under a token budget, with provenance.

>>> sorted(ROLLUPS.names())
['fact_extraction', 'session_gist', 'summary_buffer', 'time_ladder']
>>> ROLLUPS.build({"name": "time_ladder", "headroom": 1.5})
TimeLadder(headroom=1.5, day_after_days=1, week_after_days=7, month_after_days=30, max_tokens=200, max_prompt_tokens=None)
"""

from lyra_lab.memory import memory_tokens, render_memory
from lyra_lab.rollup._base import ROLLUPS, BaseRollup, Compaction, Edit, skip
from lyra_lab.rollup._fact_extraction import FactExtraction, normalize, parse_facts
from lyra_lab.rollup._periods import GRAINS, Grain, in_period, period_bounds, period_grain, period_key
from lyra_lab.rollup._session_gist import SessionGist
from lyra_lab.rollup._summary_buffer import SummaryBuffer
from lyra_lab.rollup._time_ladder import TimeLadder
from lyra_lab.rollup._types import CompactRequest, Rollup, RollupReport

__all__ = [
    "BaseRollup",
    "CompactRequest",
    "Compaction",
    "Edit",
    "FactExtraction",
    "GRAINS",
    "Grain",
    "ROLLUPS",
    "Rollup",
    "RollupReport",
    "SessionGist",
    "SummaryBuffer",
    "TimeLadder",
    "in_period",
    "memory_tokens",
    "normalize",
    "parse_facts",
    "period_bounds",
    "period_grain",
    "period_key",
    "render_memory",
    "skip",
]
