"""Reusable hypothesis generators and invariant checks for memory strategies and systems (yours included).

Generate conversations that stress a strategy, then check it::

    from hypothesis import given, settings
    from lyra_lab.testing import check_chunker, turns_strategy

    @settings(max_examples=200, deadline=None)
    @given(turns_strategy())
    def test_my_chunker(turns):
        check_chunker(MyChunker(), turns)
"""

from lyra_lab.testing._chunk_invariants import InvariantViolation, check_chunker
from lyra_lab.testing._conversations import SPEAKERS, conversations, huge_lines, turn_texts, turns_strategy
from lyra_lab.testing._recall_invariants import check_hits, check_recall, check_render, memory_stores
from lyra_lab.testing._rollup_machine import rollup_machine, word_count
from lyra_lab.testing._system_contract import (VOCABULARY, ContractOptions, ContractQuery, check_answer,
                                               check_memory_system, check_system_contract, contract_cases,
                                               fixed_case)

__all__ = [
    "SPEAKERS",
    "VOCABULARY",
    "ContractOptions",
    "ContractQuery",
    "InvariantViolation",
    "check_answer",
    "check_chunker",
    "check_memory_system",
    "check_hits",
    "check_recall",
    "check_render",
    "check_system_contract",
    "contract_cases",
    "conversations",
    "fixed_case",
    "huge_lines",
    "memory_stores",
    "rollup_machine",
    "turn_texts",
    "turns_strategy",
    "word_count",
]
