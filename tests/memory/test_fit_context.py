"""The line-additive context renderer gives exactly the plain renderer's blocks and counts, counting each line once."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab.backends import LineMemoCounter, token_counter
from lyra_lab.memory import ContextFit, MemoryEntry, fit_context, fit_contexts, render_context
from lyra_lab.memory._cuts import Cuts, _space_cuts, line_counts

T0 = datetime(2023, 5, 7, tzinfo=timezone.utc)
COUNTER = token_counter("gpt-4o-mini")
WORDS = ["Ana", "moved", "to", "Lisbon", "in", "May", "2023", "—", "cello", "é", "naïve", "日本", "🎻", "\n", "  ",
         "/path", "\n/x", "\n ", "it's", "ΣΟΦΙΑΣ", "…"]


def entry(i: int, text: str, days: int) -> MemoryEntry:
    return MemoryEntry(id=f"e{i}", conversation_id="c", kind="turn", text=text, turn_ids=(f"t{i}",),
                       start=T0 + timedelta(days=days), end=T0 + timedelta(days=days + (i % 3)))


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=40).map(" ".join)
# Any characters too (spaces, tabs, other Unicode whitespace, punctuation runs), beside the words.
wild = st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=6)), min_size=1, max_size=30).map("".join)
CL100K = token_counter("gpt-4")


@settings(max_examples=60, deadline=None)
@given(st.lists(texts, min_size=1, max_size=12), st.lists(st.integers(1, 160), min_size=1, max_size=4))
def test_additive_renderer_equals_the_plain_one(bodies, budgets):
    entries = [entry(i, text, i) for i, text in enumerate(bodies)]
    memo = LineMemoCounter(COUNTER)
    for budget in budgets * 2:  # the second round is served from the renderer's memos
        fast = fit_context(entries, budget, memo)
        plain = fit_context(entries, budget, COUNTER)  # a TokenCounter is not line-additive: the plain path
        assert fast == plain
        assert fast.text == render_context(entries, budget, COUNTER) == render_context(entries, budget, memo)
        assert fast.tokens == COUNTER(fast.text) <= budget


def test_whole_lines_and_tokens_of_a_cut_block():
    entries = [entry(0, "one two three", 0), entry(1, "four five six seven eight nine ten", 1)]
    first = "[2023-05-07] one two three"
    budget = COUNTER(first + "\n[2023-05-08..2023-05-09] four five …")
    fit = fit_context(entries, budget, LineMemoCounter(COUNTER))
    assert fit == ContextFit(first + "\n[2023-05-08..2023-05-09] four five …", 1, budget)
    assert fit_context(entries, 0, LineMemoCounter(COUNTER)) == ContextFit("", 0, 0)


class CountingCounter(LineMemoCounter):
    """A fake-free spy: the real counter, with a tally of the texts it had to encode."""

    def __init__(self):
        super().__init__(COUNTER)
        self.encoded = 0
        inner = self.counter

        self.texts: list[str] = []

        def counted(text):
            self.encoded += 1
            self.texts.append(text)
            return inner(text)

        self.counter = counted  # type: ignore[assignment]


def test_each_entry_line_is_counted_once_however_many_contexts_use_it():
    entries = [entry(i, f"fact number {i} about the cello", i) for i in range(30)]
    count = CountingCounter()
    fit_context(entries, 10_000, count)  # everything fits: no truncation
    after_first = count.encoded
    assert 30 <= after_first <= 2 * 30  # at most each line, and each line + "\n", once (pieces of them recur)
    for budget in (10_000, 5_000, 10_000):
        fit_context(entries[::-1], budget, count)
    assert count.encoded == after_first


@settings(max_examples=80, deadline=None)
@given(st.one_of(texts, wild), st.sampled_from(["[2023-05-07] ", "[undated] ", "[2023-05-07..2023-05-09] "]),
       st.sampled_from([COUNTER, CL100K]))
def test_each_cut_is_counted_as_the_counter_counts_its_line(text, head, counter):
    """Cuts adds up the pieces between spaces that follow non-spaces: equal to counting the whole cut line."""
    cuts = Cuts(LineMemoCounter(counter), head, text)
    for m in range(1, len(cuts.offsets)):
        got = cuts.at(m)
        if got is not None:
            chars, n = got
            assert n == counter(cuts.line(chars))
            assert cuts.line(chars) == head + counter.decode(counter.encode(text)[:m]).rstrip() + " …"


@settings(max_examples=150, deadline=None)
@given(st.one_of(texts, wild), st.sampled_from(["[2023-05-07] ", "[undated] ", "[2023-05-07..2023-05-09] "]),
       st.sampled_from([COUNTER, CL100K]))
def test_a_line_is_counted_from_its_text_as_the_counter_counts_it(text, head, counter):
    n, n_nl, tokens = line_counts(LineMemoCounter(counter), head, text)
    assert (n, n_nl) == (counter(head + text), counter(head + text + "\n"))
    assert tokens is None or list(tokens) == list(counter.encode(text))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(texts, wild), min_size=1, max_size=12),
       st.lists(st.integers(-2, 200), min_size=1, max_size=5), st.sampled_from([COUNTER, CL100K]))
def test_budgets_filled_in_one_pass_equal_each_plain_fit(bodies, budgets, counter):
    entries = [entry(i, text, i) for i, text in enumerate(bodies)]
    memo = LineMemoCounter(counter)
    for _ in range(2):  # the second round is served from the renderer's memos
        assert fit_contexts(entries, budgets, memo) == [fit_context(entries, b, counter) for b in budgets]
    assert fit_contexts(entries, budgets, counter) == [fit_context(entries, b, counter) for b in budgets]


def test_a_cut_encodes_only_its_last_words():
    words = " ".join(f"word{i}" for i in range(60))
    line = "[2023-05-07] word0 word1 word2 …"
    count = CountingCounter()
    cuts = Cuts(count, "[2023-05-07] ", words)
    assert cuts.longest(COUNTER(line)) == (line, COUNTER(line))
    before = len(count.texts)
    for m in range(1, len(cuts.offsets)):
        cuts.at(m)
    texts = count.texts[before:]
    assert 0 < len(texts) < len(cuts.offsets)  # at most one text per cut, none counted twice
    whole = [text for text in texts if text.startswith("[")]
    assert all(text.startswith("[2023-05-07] word") and " " not in text[13:-2] for text in whole)  # in word0
    assert all(len(text) <= len(" word59 …") for text in texts if text not in whole)  # else its last word only


def test_a_text_the_tokenizer_sanitizes_is_counted_whole():
    cuts = Cuts(LineMemoCounter(COUNTER), "[undated] ", "bad \ud800 surrogate here")
    for m in range(1, len(cuts.offsets)):
        got = cuts.at(m)
        if got is not None:
            assert got[1] == COUNTER(cuts.line(got[0]))


@settings(max_examples=300, deadline=None)
@given(st.one_of(texts, wild, st.text(alphabet=" ab.\t\n\u00a0é", max_size=20)))
def test_space_cuts_are_the_spaces_after_non_spaces(text):
    assert _space_cuts(text) == [match.start() for match in re.finditer(r"(?<=\S) ", text)]
