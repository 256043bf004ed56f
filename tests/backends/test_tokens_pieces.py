"""Long texts are encoded in bounded pieces, and memory lines counted once, with exact counts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab.backends._tokens import SAFE_CUT, LineMemoCounter, pieces, token_counter

BITS = st.sampled_from(["a", "Bc", " ", "  ", "\n", "\n\n", ".", ",!", "'s", "1", "234", "é", "日本", "\t", "/",
                        "\r\n", "—", "[2023-05-01] ", "<|endoftext|>", "\u0301", "\u00a0"])
TEXTS = st.lists(BITS, max_size=120).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=TEXTS, size=st.integers(2, 40), model=st.sampled_from(["gpt-4o-mini", "gpt-4"]))
def test_pieces_at_safe_cuts_keep_counts_exact(text, size, model):
    count = token_counter(model)
    parts = pieces(text, size)
    assert "".join(parts) == text
    cuts = [sum(len(p) for p in parts[:i]) for i in range(1, len(parts))]
    if all(SAFE_CUT.match(text, c) for c in cuts):  # not a blind cut (a run with no whitespace)
        assert sum(count(p) for p in parts) == count(text)


@settings(max_examples=300, deadline=None)
@given(text=TEXTS, model=st.sampled_from(["gpt-4o-mini", "gpt-4"]))
def test_line_memo_counts_equal_whole_text_counts(text, model):
    count = token_counter(model)
    memo = LineMemoCounter(count)
    assert memo(text) == count(text) == memo(text)


def test_megabytes_are_counted_and_encoded_without_the_tokenizer_limit():
    count = token_counter("gpt-4o-mini")
    line = "user: we talked about the garden, the piano and the trip to Porto.\n"
    text = line * 80_000  # 5.4 MB
    assert count(text) == len(count.encode(text)) == 80_000 * count(line)
    assert count.decode(count.encode(text[:100_000])) == text[:100_000]
