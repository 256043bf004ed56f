"""Time spans named in questions, and how close a date is to them."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from lyra_lab.recall import Span, closeness, named_spans


def spans(text):
    return [(s.first.isoformat(), s.last.isoformat(), s.any_year) for s in named_spans(text)]


@pytest.mark.parametrize(("question", "expected"), [
    ("What painting did Melanie show on October 13, 2023?", [("2023-10-13", "2023-10-13", False)]),
    ("What did Gina find on 1 February, 2023?", [("2023-02-01", "2023-02-01", False)]),
    ("What did Maria donate in December 2023?", [("2023-12-01", "2023-12-31", False)]),
    ("When did Melanie go camping in June?", [("2000-06-01", "2000-06-30", True)]),
    ("How many times has Melanie gone to the beach in 2023?", [("2023-01-01", "2023-12-31", False)]),
    ("What did John do in summer 2022?", [("2022-06-01", "2022-08-31", False)]),
    ("What did Maria do before April 10, 2023?", [("2023-04-10", "2023-04-10", False)]),
    ("May I ask what she may like?", []),
    ("What happened on February 30, 2023?", []),
])
def test_named_spans(question, expected):
    assert spans(question) == expected


def test_closeness_is_one_inside_and_decays_by_e_per_scale_outside():
    june = named_spans("in June 2023")
    dates = [datetime(2023, 6, 10, tzinfo=timezone.utc), datetime(2023, 7, 14, tzinfo=timezone.utc),
             datetime(2023, 5, 18, tzinfo=timezone.utc), None]
    # inside; 14 days after June 30; 14 days before June 1; undated
    assert closeness(dates, june, 14.0) == pytest.approx([1.0, 0.36787944, 0.36787944, 0.0])
    assert closeness(dates, [], 14.0).tolist() == [0.0] * 4


def test_a_bare_month_matches_that_month_of_any_year():
    june = [Span(date(2000, 6, 1), date(2000, 6, 30), any_year=True)]
    assert closeness([datetime(2021, 6, 3, tzinfo=timezone.utc)], june).tolist() == [1.0]
