"""Differential: the token chunkers give exactly the chunks of their plain algorithm.

The chunkers count each line once and add the counts up (``line_counts``);
the reference below is the algorithm as it was before that, written plainly:
every candidate text is counted whole with the encoding's own counter, no
memo.  Both must agree on every chunk, field for field, for ``overlap_window``,
``token_budget`` and ``adaptive`` (which packs through ``token_groups``).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab import datasets
from lyra_lab.backends import token_counter
from lyra_lab.chunking import CHUNKERS, AdaptiveChunker, Chunk
from lyra_lab.chunking._render import Transcript, split_lines
from lyra_lab.chunking._spans import fit_suffix_start, plain_spans, spans_to_chunks, split_oversize
from lyra_lab.corpus import load
from lyra_lab.testing import turns_strategy

MAX_CHARS_PER_TOKEN = 128
ENCODINGS = st.sampled_from(["o200k_base", "cl100k_base"])
INPUTS = st.one_of(turns_strategy(), turns_strategy(allow_empty=False, huge_line=True), st.text(max_size=600))


def _units(text, count, limit):
    def guess(s):
        tokens = count.encode(s)
        for k in range(limit, max(limit - 4, 0), -1):
            head = count.decode(tokens[:k])
            if head and s.startswith(head):
                return len(head)
        return None

    return split_oversize(split_lines(text), lambda s: count(s) <= limit, limit * MAX_CHARS_PER_TOKEN, guess)


def _offsets(units):
    out = [0]
    for unit in units:
        out.append(out[-1] + len(unit))
    return out


def _grow(text, offsets, counts, start, i, limit, count):
    j, estimate = i + 1, count(text[start:offsets[i + 1]])
    while j < len(counts) and estimate + counts[j] <= limit:
        estimate += counts[j]
        j += 1
    while j > i + 1 and count(text[start:offsets[j]]) > limit:
        j -= 1
    while j < len(counts) and count(text[start:offsets[j + 1]]) <= limit:
        j += 1
    return j


def _groups(text, limit, count):
    units = _units(text, count, limit)
    offsets, counts = _offsets(units), [count(u) for u in units]
    groups, i = [], 0
    while i < len(units):
        j = _grow(text, offsets, counts, offsets[i], i, limit, count)
        groups.append((offsets[i], offsets[j]))
        i = j
    return groups


def _overlap_start(text, pos, end, count, max_tokens, overlap_tokens):
    if overlap_tokens == 0:
        return pos
    lo = max(0, pos - overlap_tokens * MAX_CHARS_PER_TOKEN)

    def fits(tail):
        return count(tail) <= overlap_tokens and count(tail + text[pos:end]) <= max_tokens

    before, tokens = text[lo:pos], count.encode(text[lo:pos])
    guess = None
    for k in range(overlap_tokens, max(overlap_tokens - 4, 0), -1):
        tail = count.decode(tokens[-k:])
        if tail and before.endswith(tail):
            guess = pos - len(tail)
            break
    start = fit_suffix_start(text, lo, pos, fits, guess)
    return start if fits(text[start:pos]) else pos


def reference_overlap_window(source, max_tokens, overlap_tokens, encoding):
    transcript, count = Transcript.of(source), token_counter(encoding)
    text = transcript.text
    units = _units(text, count, max_tokens - overlap_tokens)
    offsets, counts = _offsets(units), [count(u) for u in units]
    spans, i = [], 0
    while i < len(units):
        pos = offsets[i]
        start = _overlap_start(text, pos, offsets[i + 1], count, max_tokens, overlap_tokens) if spans else pos
        j = _grow(text, offsets, counts, start, i, max_tokens, count)
        spans.append((start, pos, offsets[j]))
        i = j
    return spans_to_chunks(transcript, spans, count)


def reference_token_budget(source, max_tokens, encoding):
    transcript, count = Transcript.of(source), token_counter(encoding)
    return spans_to_chunks(transcript, plain_spans(_groups(transcript.text, max_tokens, count)), count)


def reference_oversize_plan(source, target_tokens, encoding) -> tuple[int, list[Chunk]]:
    """Adaptive's ``oversize`` branch (the one that counts): tokens, and its chunks."""
    transcript, count = Transcript.of(source), token_counter(encoding)
    tokens = count(transcript.text)
    per_chunk = min(target_tokens, math.ceil(1.1 * tokens / max(math.ceil(tokens / target_tokens), 1)))
    return tokens, spans_to_chunks(transcript, plain_spans(_groups(transcript.text, per_chunk, count)), count)


DIFF = settings(max_examples=80, deadline=None)


@DIFF
@given(source=INPUTS, max_tokens=st.integers(2, 120), data=st.data(), encoding=ENCODINGS)
def test_overlap_window_equals_its_reference(source, max_tokens, data, encoding):
    overlap = data.draw(st.integers(0, max_tokens - 1), label="overlap_tokens")
    chunker = CHUNKERS.build({"name": "overlap_window", "max_tokens": max_tokens,
                              "overlap_tokens": overlap, "encoding": encoding})
    assert chunker.chunk(source) == reference_overlap_window(source, max_tokens, overlap, encoding)


@DIFF
@given(source=INPUTS, max_tokens=st.integers(1, 150), encoding=ENCODINGS)
def test_token_budget_equals_its_reference(source, max_tokens, encoding):
    chunker = CHUNKERS.build({"name": "token_budget", "max_tokens": max_tokens, "encoding": encoding})
    assert chunker.chunk(source) == reference_token_budget(source, max_tokens, encoding)


@DIFF
@given(source=INPUTS, target=st.integers(1, 300), encoding=ENCODINGS)
def test_adaptive_oversize_equals_its_reference(source, target, encoding):
    plan = AdaptiveChunker(target_tokens=target, encoding=encoding).plan(source)
    tokens, chunks = reference_oversize_plan(source, target, encoding)
    assert plan.tokens == tokens
    if plan.decision == "oversize":
        assert list(plan) == chunks
    else:
        assert all(c.tokens == token_counter(encoding)(c.text) for c in plan)


@pytest.mark.skipif(datasets.find("locomo") is None, reason="LoCoMo not installed (lyra-lab datasets get locomo)")
def test_default_windows_on_locomo_equal_the_reference():
    """The default budgets on two real conversations: the overlaps and seams users get."""
    for conversation in load(datasets.find("locomo")).conversations[:2]:
        turns = list(conversation.turns())
        for name, reference in (("overlap_window", lambda t: reference_overlap_window(t, 3000, 200, "o200k_base")),
                                ("token_budget", lambda t: reference_token_budget(t, 2000, "o200k_base"))):
            chunks = CHUNKERS.build(name).chunk(turns)
            assert len(chunks) > 5 and chunks == reference(turns)
