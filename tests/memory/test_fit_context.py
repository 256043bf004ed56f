"""The line-additive context renderer gives exactly the plain renderer's blocks and counts, counting each line once."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import example, given, settings
from hypothesis import strategies as st

from lyra_lab.backends import LineMemoCounter, PlainCount, token_counter
from lyra_lab.memory import ContextFit, MemoryEntry, fit_context, fit_contexts, render_context
from lyra_lab.memory import ELLIPSIS, hit_line
from lyra_lab.memory._render import _truncate, longest_cut

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
def test_a_block_of_added_up_lines_is_counted_as_a_whole(bodies, budgets):
    entries = [entry(i, text, i) for i, text in enumerate(bodies)]
    memo = LineMemoCounter(COUNTER)
    for budget in budgets * 2:  # the second round is served from the counter's memo
        fit = fit_context(entries, budget, memo)
        assert fit == fit_context(entries, budget, COUNTER)
        assert fit.text == render_context(entries, budget, COUNTER) == render_context(entries, budget, memo)
        assert fit.tokens == COUNTER(fit.text) <= budget  # the lines' counts added up are the block's count
        lines = fit.text.split("\n") if fit.text else []
        whole = [hit_line(e) for e in entries[:fit.whole]]
        assert "\n".join(whole) == fit.text[:len("\n".join(whole))]
        rest = fit.text[len("\n".join(whole)):].lstrip("\n")
        assert not rest or (rest.endswith(ELLIPSIS) and fit.whole < len(entries)) or not lines


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


@settings(max_examples=150, deadline=None)
@given(st.one_of(texts, wild), st.sampled_from(["[2023-05-07] ", "[undated] ", "[2023-05-07..2023-05-09] "]),
       st.sampled_from([COUNTER, CL100K]), st.integers(1, 60))
@example("ΣΟΦΙΑΣ", "[2023-05-07] ", CL100K, 11)  # characters split over tokens: some cuts fall inside one
@example("\U00010000:0:0\U00010000\U00010000", "[2023-05-07..2023-05-09] ", COUNTER, 32)
def test_a_cut_line_is_the_longest_head_that_fits(text, head, counter, budget):
    """The cut is ``head + text[:m] + " …"`` within budget, on a token boundary, and the next cut does not fit."""
    cut = _truncate(head, text, budget, LineMemoCounter(counter))
    tokens = counter.encode(text)
    cuts = [counter.decode(tokens[:m]).rstrip() for m in range(1, len(tokens) + 1)]
    fitting = [m for m, body in enumerate(cuts, start=1)
               if body and text.startswith(body) and counter(head + body + ELLIPSIS) <= budget]
    if cut is None:
        assert not fitting
        return
    assert cut.startswith(head) and cut.endswith(ELLIPSIS) and counter(cut) <= budget
    body = cut[len(head):-len(ELLIPSIS)]
    m = cuts.index(body) + 1
    assert m in fitting and (m + 1 not in fitting or cuts[m] == body)  # a longest run's end


@settings(max_examples=300, deadline=None)
@given(st.lists(st.booleans(), min_size=0, max_size=30), st.integers(-5, 40))
def test_longest_cut_finds_the_last_fitting_cut_of_a_monotone_count(pattern, guess):
    n = len(pattern)
    fits_until = sum(pattern)  # cuts 1..fits_until fit, the rest do not (a monotone count)
    calls: list[int] = []

    def fits(m):
        calls.append(m)
        return m <= fits_until

    assert longest_cut(n, fits, guess) == (min(fits_until, n) or None)
    assert all(1 <= m <= n for m in calls)


def test_a_good_guess_costs_two_counts():
    calls: list[int] = []
    assert longest_cut(100, lambda m: calls.append(m) or m <= 40, 40) == 40 and len(calls) == 2
    assert longest_cut(100, lambda m: m <= 40, 41) == 40


def test_a_plain_counting_function_cuts_on_words():
    words = PlainCount(lambda text: len(text.split()))
    entries = [entry(0, "one two three four five six", 0)]
    fit = fit_context(entries, 4, words)  # "[2023-05-07..2023-05-07]" is one word, "…" another
    assert fit.text == "[2023-05-07] one two …" and fit.whole == 0 and fit.tokens == 4


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(texts, wild), min_size=1, max_size=12),
       st.lists(st.integers(-2, 200), min_size=1, max_size=5), st.sampled_from([COUNTER, CL100K]))
def test_budgets_filled_in_one_pass_equal_each_plain_fit(bodies, budgets, counter):
    entries = [entry(i, text, i) for i, text in enumerate(bodies)]
    memo = LineMemoCounter(counter)
    for _ in range(2):  # the second round is served from the renderer's memos
        assert fit_contexts(entries, budgets, memo) == [fit_context(entries, b, counter) for b in budgets]
    assert fit_contexts(entries, budgets, counter) == [fit_context(entries, b, counter) for b in budgets]


def test_a_text_the_tokenizer_sanitizes_is_cut_within_budget():
    text = "bad \ud800 surrogate here and more words to cut"
    for budget in range(1, 30):
        cut = _truncate("[undated] ", text, budget, LineMemoCounter(COUNTER))
        assert cut is None or (COUNTER(cut) <= budget and text.startswith(cut[len("[undated] "):-len(ELLIPSIS)]))
