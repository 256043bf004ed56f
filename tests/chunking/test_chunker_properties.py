"""Property tests: every registered chunker keeps every invariant on generated conversations.

Budgets are drawn small so that chunks are many, huge lines exceed them, and
overlaps, cuts and session breaks all happen (the coverage test at the end
checks that they do).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab.chunking import CHUNKERS, AdaptiveChunker, Chunk, render_turns
from lyra_lab.testing import check_chunker, turns_strategy

PROPERTY = settings(max_examples=200, deadline=None)


@st.composite
def overlap_specs(draw):
    max_tokens = draw(st.integers(2, 80))
    return {"max_tokens": max_tokens, "overlap_tokens": draw(st.integers(0, max_tokens - 1))}


# One spec generator per registered chunker; test_every_chunker_has_a_spec keeps this honest.
SPECS = {
    "line_budget": st.fixed_dictionaries({"max_chars": st.integers(1, 400)}),
    "token_budget": st.fixed_dictionaries({"max_tokens": st.integers(3, 120),
                                           "encoding": st.sampled_from(["o200k_base", "cl100k_base"])}),
    "turn_window": st.fixed_dictionaries({"max_turns": st.integers(1, 6), "respect_sessions": st.booleans()}),
    "overlap_window": overlap_specs(),
    "adaptive": st.fixed_dictionaries({
        "target_tokens": st.integers(5, 600),
        "ratio": st.floats(0, 1),
        "target_chunks": st.integers(1, 4),
        "min_chunk_chars": st.integers(1, 300),
    }),
}


def test_every_chunker_has_a_spec():
    assert sorted(SPECS) == CHUNKERS.names()


@pytest.mark.parametrize("name", sorted(SPECS))
@PROPERTY
@given(data=st.data(), turns=turns_strategy())
def test_chunker_invariants(name, data, turns):
    chunker = CHUNKERS.build({"name": name, **data.draw(SPECS[name], label="params")})
    check_chunker(chunker, turns)


@pytest.mark.parametrize("name", sorted(SPECS))
@PROPERTY
@given(data=st.data(), text=st.text(max_size=300))
def test_chunker_invariants_on_raw_text(name, data, text):
    # Raw text need not end with a newline, may hold "\r", "\u2028" and the like.
    chunker = CHUNKERS.build({"name": name, **data.draw(SPECS[name], label="params")})
    chunks = check_chunker(chunker, text)
    assert all(c.turn_ids == () for c in chunks)


@PROPERTY
@given(data=st.data(), turns=turns_strategy())
def test_turn_window_puts_each_turn_in_exactly_one_chunk(data, turns):
    chunker = CHUNKERS.build({"name": "turn_window", **data.draw(SPECS["turn_window"])})
    chunks = chunker.chunk(turns)
    ids = [t for c in chunks for t in c.turn_ids]
    assert ids == [t.id for t in turns]
    if chunker.respect_sessions:
        assert all(len(c.session_ids) == 1 for c in chunks)


@PROPERTY
@given(params=overlap_specs(), turns=turns_strategy(allow_empty=False))
def test_overlap_stays_within_overlap_tokens(params, turns):
    chunker = CHUNKERS.build({"name": "overlap_window", **params})
    count = chunker.budget().measure
    for chunk in chunker.chunk(turns):
        overlap = chunk.text[:chunk.overlap_chars]
        assert count(Chunk(0, overlap)) <= params["overlap_tokens"]


@PROPERTY
@given(data=st.data(), turns=turns_strategy())
def test_adaptive_decision_follows_its_rule(data, turns):
    chunker = CHUNKERS.build({"name": "adaptive", **data.draw(SPECS["adaptive"])})
    plan = chunker.plan(turns)
    text = render_turns(turns)
    tokens = chunker.budget().measure(Chunk(0, text))
    assert plan.tokens == tokens
    if tokens > chunker.target_tokens:
        assert plan.decision == "oversize" and len(plan) >= 2
    elif tokens >= chunker.ratio * chunker.target_tokens and chunker.target_chunks > 1 \
            and len(text) >= chunker.target_chunks * chunker.min_chunk_chars:
        assert plan.decision == "preemptive" and 1 <= len(plan) <= chunker.target_chunks
    else:
        assert plan.decision == "single_pass" and len(plan) == (1 if text else 0)
    assert list(plan) == chunker.chunk(turns)


def test_generated_inputs_exercise_the_hard_cases():
    """The property tests above are only as good as their inputs: check those reach the edges."""
    seen = {"multi": 0, "oversize_cut": 0, "overlap": 0, "split_turn": 0, "preemptive": 0, "oversize": 0}

    @settings(max_examples=100, deadline=None, database=None)
    @given(turns=turns_strategy(allow_empty=False, huge_line=True))
    def run(turns):
        chunks = CHUNKERS.build({"name": "token_budget", "max_tokens": 40}).chunk(turns)
        seen["multi"] += len(chunks) > 1
        seen["oversize_cut"] += any("\n" not in c.text for c in chunks)
        seen["split_turn"] += any(a.turn_ids[-1:] == b.turn_ids[:1] for a, b in zip(chunks, chunks[1:]))
        seen["overlap"] += any(c.overlap_chars for c in
                               CHUNKERS.build({"name": "overlap_window", "max_tokens": 60,
                                               "overlap_tokens": 15}).chunk(turns))
        for target in (300, 3000):
            plan = AdaptiveChunker(target_tokens=target, ratio=0.05, min_chunk_chars=100).plan(turns)
            seen[plan.decision] = seen.get(plan.decision, 0) + 1

    run()
    cases = ("multi", "oversize_cut", "overlap", "split_turn", "oversize", "preemptive")
    assert all(seen[k] >= 5 for k in cases), seen
