"""The shared figure helpers: grouping identical series, group labels, label placement, small n."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from matplotlib.figure import Figure

from lyra_lab.reports import figure_problems
from lyra_lab.reports._legible import (
    LineLabel,
    group_identical,
    group_label,
    is_small,
    label_lines,
    n_phrase,
    short_labels,
    spread,
)

PIPES = [f"{c}+{s}+none+raw={r}|{rec}" for c in ("token_budget", "turn_window") for s in ("single_pass", "map_reduce")
         for r in ("yes", "no") for rec in ("dense", "bm25")]


def test_identical_series_form_one_group_in_first_seen_order():
    series = {"a": [1.0, 2.0, float("nan")], "b": [0.5, 2.0, 1.0], "c": [1.0, 2.0, float("nan")]}
    groups = group_identical(series)
    assert [g.members for g in groups] == [("a", "c"), ("b",)]
    assert group_identical({"x": [0.1 + 0.2], "y": [0.3]})[0].members == ("x", "y")  # equal after rounding


def test_group_labels_say_which_parts_vary():
    same_memory = [p for p in PIPES if "+single_pass+" in p and "raw=yes" in p and p.endswith("|dense")]
    assert group_label(same_memory, PIPES) == "*+single_pass+none+raw=yes|dense ×2"
    every_summarizer = [p for p in PIPES if p.startswith("turn_window") and p.endswith("raw=no|bm25")]
    assert group_label(every_summarizer, PIPES) == "turn_window+*+none+raw=no|bm25 ×2"
    both = [p for p in PIPES if "raw=yes" in p and p.endswith("|dense")]
    assert group_label(both, PIPES) == "*+*+none+raw=yes|dense ×4"
    # some values of a part but not all: listed; not a full product: the first member and a count
    three = [p for p in PIPES if p.endswith("|dense")][:3]
    assert group_label(three, PIPES).endswith("and 2 more, identical")
    assert group_label(["a|x", "b|x"], ["a|x", "b|x", "c|x"]) == "{a,b}|x ×2"


def test_short_labels_drop_what_every_label_shares():
    short, shared = short_labels(PIPES)
    assert short["token_budget+single_pass+none+raw=yes|dense"] == "token_budget+single_pass+raw=yes|dense"
    assert shared == "…+none+…"
    assert len(set(short.values())) == len(PIPES)  # still one label per pipeline
    assert short_labels(["a|x"]) == ({"a|x": "a|x"}, "")


@given(st.lists(st.tuples(st.floats(-50, 150), st.floats(1, 20)), min_size=1, max_size=25))
def test_spread_labels_never_overlap_and_keep_their_order(items):
    targets, sizes = [t for t, _ in items], [s for _, s in items]
    centres = spread(targets, sizes, 0.0, 400.0)
    order = sorted(range(len(items)), key=lambda i: (targets[i], i))
    for a, b in zip(order, order[1:]):
        assert centres[a] + sizes[a] / 2 <= centres[b] - sizes[b] / 2 + 1e-9  # no overlap, order kept
    if sum(sizes) <= 400:
        assert all(c - s / 2 >= -1e-9 and c + s / 2 <= 400 + 1e-9 for c, s in zip(centres, sizes))


def test_spread_leaves_labels_that_fit_where_they_are():
    assert spread([10.0, 50.0, 90.0], [8.0, 8.0, 8.0], 0.0, 100.0) == [10.0, 50.0, 90.0]


def test_direct_labels_of_crowded_line_ends_do_not_overlap():
    fig = Figure(figsize=(6, 3), layout="constrained")
    ax = fig.subplots()
    ends = [0.50, 0.505, 0.51, 0.52, 0.53, 0.9]
    for i, y in enumerate(ends):
        ax.plot([0, 1], [0.1 * i, y], color=f"C{i}")
    ax.set_ylim(0, 1)
    label_lines(ax, [LineLabel(1, y, f"pipeline number {i}\n(n=5)", f"C{i}") for i, y in enumerate(ends)])
    assert figure_problems(fig) == []


def test_small_n_and_n_phrases():
    assert is_small(9) and not is_small(10) and not is_small("n/a")
    assert n_phrase([7, 7, 7]) == "n = 7 probes each"
    assert n_phrase([1], "values") == "n = 1 value each"
    assert n_phrase([3, 12, 0]) == "n = 3–12 probes"
