"""Normalizing a text line by line (memoized) is exactly normalizing it whole."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab.matching import RetainedAnswer, answer_retained, normalize_answer
from lyra_lab.matching._retention import normalized_text

PIECES = ["The", "a", "an", "cat's", "ΟΔΟΣ", "Σ", "σ.", "‘quoted’", "—", "May 7, 2023", "\n", "\n\n", " ", "\t",
          "İstanbul", "x\u0301", "a\nthe", "…", "[2023-05-08]"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
def test_line_by_line_equals_whole(text):
    assert normalized_text(text) == normalize_answer(text)


def test_final_sigma_stops_at_a_newline():
    # lower() turns a word-final capital sigma into "ς": the newline must end the word either way
    assert normalized_text("ΟΔΟΣ\nΑΒ") == normalize_answer("ΟΔΟΣ\nΑΒ") == "οδος αβ"


def test_retention_over_lines():
    assert answer_retained("7 May 2023", "[2023-05-08] Ana: I moved on\n[2023-05-09] May 7, 2023!")
    assert not answer_retained("Lisbon Portugal", "[2023-05-08] Ana: Lisbon\n[2023-05-09] the end")


ANSWERS = ["7 May 2023", "Lisbon", "the cat", "Σ σ", "May", "a 2023", "İstanbul cat's"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(ANSWERS), st.lists(st.sampled_from(PIECES + ["cat", "Lisbon", "2023", "7"]), max_size=30)
       .map("".join), st.sampled_from([0.5, 0.8, 1.0]))
def test_retained_answer_over_line_tokens_is_the_rule_as_written(answer, text, threshold):
    # RetainedAnswer asks token recall of the lines' token sets; answer_retained pads the whole normalized text
    assert RetainedAnswer(answer, threshold)(text) == answer_retained(answer, text, threshold)


def test_retained_answer_takes_tokens_across_lines():
    assert RetainedAnswer("Lisbon Portugal")("[2023-05-08] Lisbon\n[2023-05-09] Portugal …")
    assert not RetainedAnswer("Lisbon Portugal", 1.0)("[2023-05-08] Lisbon\n[2023-05-09] Portugals")


_lines = st.lists(st.lists(st.sampled_from([p for p in PIECES if "\n" not in p] + ["cat", "Lisbon", "2023", " ", "7"]),
                           max_size=12).map("".join), min_size=1, max_size=5)  # lines of a block: no newline


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(ANSWERS), _lines, st.data(), st.sampled_from([" …", "", "…", " x", "\u00a0…"]))
def test_a_block_closed_by_a_cut_line_is_read_as_its_text(answer, lines, data, mark):
    whole = data.draw(st.integers(0, len(lines) - 1))
    full = lines[whole]
    cut = full[:data.draw(st.integers(0, len(full)))] + mark
    retained = RetainedAnswer(answer)
    firsts = retained.firsts(lines[:whole])
    assert retained.in_block(firsts, whole, cut, full) == retained("\n".join([*lines[:whole], cut]))
    assert retained.in_block(firsts, whole) == retained("\n".join(lines[:whole]))
