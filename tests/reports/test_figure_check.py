"""figure_problems finds each fault it names on figures built to have it, and nothing on a clean one."""

from __future__ import annotations

from matplotlib.figure import Figure

from lyra_lab.reports import figure_problems


def kinds(fig) -> list[str]:
    return sorted(p.kind for p in figure_problems(fig))


def clean() -> tuple[Figure, object]:
    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.subplots()
    ax.plot([1, 2, 3], [0.1, 0.5, 0.9], "-o", label="a")
    ax.plot([1, 2, 3], [0.9, 0.5, 0.2], "-o", label="b")  # crosses a at x = 2: crossing is not covering
    ax.set_title("two lines")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    return fig, ax


def test_a_clean_figure_has_no_problem():
    fig, ax = clean()
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside the axes
    ax.annotate("peak", (3, 0.9), xytext=(-30, -10), textcoords="offset points")
    assert figure_problems(fig) == []


def test_overlapping_text_is_found():
    fig, ax = clean()
    ax.text(2, 0.7, "a long annotation here")
    ax.text(2.05, 0.705, "another one on top")
    problems = figure_problems(fig)
    assert [p.kind for p in problems] == ["overlapping text"]
    assert "'a long annotation here'" in problems[0].detail and "'another one on top'" in problems[0].detail


def test_tick_labels_that_collide_are_found():
    fig = Figure(figsize=(2, 2))
    ax = fig.subplots()
    ax.plot(range(10), range(10))
    ax.set_xticks(range(10), [f"label number {i}" for i in range(10)])
    assert "overlapping text" in kinds(fig)


def test_a_legend_over_data_or_over_the_title_is_found():
    fig, ax = clean()
    ax.legend(loc="center")  # sits on the lines' crossing at x = 2
    assert kinds(fig) == ["legend over data"]
    fig, ax = clean()
    fig.legend(loc="upper center", bbox_to_anchor=(0.5, 1.0))  # over the axes title
    assert "overlapping text" in kinds(fig)


def test_a_series_drawn_under_another_with_the_same_values_is_hidden():
    fig, ax = clean()
    ax.plot([1, 2, 3], [0.1, 0.5, 0.9], "-o", label="a copy")  # exactly over "a"
    problems = figure_problems(fig)
    assert [p.kind for p in problems] == ["hidden series"]
    assert "series 'a'" in problems[0].detail and "series 'a copy'" in problems[0].detail


def test_a_series_that_differs_by_a_hair_is_hidden_too():
    fig, ax = clean()
    ax.plot([1, 2, 3], [0.1 + 1e-4, 0.5, 0.9 - 1e-4], "-o", label="nearly a")  # under a pixel from "a"
    assert kinds(fig) == ["hidden series"]


def test_a_line_is_not_hidden_by_its_own_markers_drawn_apart():
    fig = Figure()
    ax = fig.subplots()
    ax.plot([1, 2, 3], [1, 2, 3], "-")
    ax.plot([1, 2, 3], [1, 2, 3], "o", mfc="white")
    assert figure_problems(fig) == []


def test_invisible_series_are_found():
    fig, ax = clean()
    ax.plot([1, 2, 3], [0.3, 0.3, 0.3], alpha=0, label="transparent")
    ax.plot([1, 2], [0.2, 0.2], ls="none", marker="none", label="nothing drawn")
    ax.plot([10, 11], [5, 6], "o", label="outside")
    ax.set_xlim(0.5, 3.5)
    ax.set_ylim(0, 1)
    problems = figure_problems(fig)
    assert [p.kind for p in problems] == ["invisible series"] * 3
    text = " ".join(p.detail for p in problems)
    assert "alpha 0" in text and "no line and no marker" in text and "outside the axes' view" in text


def test_the_check_leaves_a_figure_without_a_canvas_as_it_was():
    fig = Figure()
    canvas = fig.canvas
    fig.subplots().plot([1, 2], [1, 2])
    figure_problems(fig)
    assert fig.canvas is canvas
