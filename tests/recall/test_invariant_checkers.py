"""The invariant checkers in lyra_lab.testing do fail on broken recallers and renderers."""

from __future__ import annotations

import pytest

from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import Hit
from lyra_lab.testing import InvariantViolation, check_hits, check_render, word_count

A = MemoryEntry("a", "c", "turn", "alpha words", ("a",))
B = MemoryEntry("b", "c", "turn", "beta words here", ("b",))
X = MemoryEntry("x", "other", "turn", "other conversation", ("x",))
STORE = MemoryStore([A, B, X])


@pytest.mark.parametrize("hits, k, problem", [
    ([Hit(A, 1, 0), Hit(B, 0.5, 1)], 1, "hits for k=1"),
    ([Hit(A, 1, 0), Hit(A, 0.5, 1)], 5, "duplicate"),
    ([Hit(A, 0.1, 0), Hit(B, 0.5, 1)], 5, "scores"),
    ([Hit(A, 1, 0), Hit(B, 0.5, 3)], 5, "rank"),
    ([Hit(X, 1, 0)], 5, "from conversation"),
    ([Hit(MemoryEntry("gone", "c", "turn", "t", ()), 1, 0)], 5, "no longer"),
    ([Hit(A, float("nan"), 0)], 5, "score nan"),
])
def test_check_hits_catches(hits, k, problem):
    with pytest.raises(InvariantViolation, match=problem):
        check_hits(hits, store=STORE, conversation_id="c", k=k)


def test_check_render_catches_over_budget_reordering_and_fake_truncation():
    hits = [Hit(A, 1, 0), Hit(B, 0.5, 1)]
    with pytest.raises(InvariantViolation, match="budget"):
        check_render("[undated] alpha words\n[undated] beta words here", hits, 5, word_count)
    with pytest.raises(InvariantViolation, match="not a truncation"):
        check_render("[undated] beta words here", hits, 50, word_count)  # hit 0 skipped
    with pytest.raises(InvariantViolation, match="not a prefix"):
        check_render("[undated] alpha words\n[undated] gamma …", hits, 50, word_count)
    assert check_render("[undated] alpha words\n[undated] beta words …", hits, 50, word_count) == 1

