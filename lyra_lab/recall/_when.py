"""Time-aware recall: the dates a question names, and how close each entry's date is to them.

Questions such as "What did Maria donate in December 2023?" or "What painting did
Melanie show on October 13, 2023?" name a span of time.  ``named_spans`` finds
absolute spans (a day, a month, a month of a year, a year, a season of a year);
``closeness`` gives each entry date 1.0 inside a span and ``exp(-days / scale)``
outside it, so a boost can prefer turns from the sessions the question points at.
Relative phrases ("last year") are left alone: the recaller is not told when the
question is asked (``now`` is the replay clock at best).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime

import numpy as np

_MONTHS = {name.lower(): n for n, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): n for n, name in enumerate(calendar.month_abbr) if name})
_MONTHS.pop("may", None)  # matched only capitalized ("May"), not the modal verb
_MONTHS["sept"] = 9
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11), "winter": (12, 14)}
_MONTH = r"(January|February|March|April|May|June|July|August|September|October|November|December|" \
         r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?"
_YEAR = r"((?:19|20)\d\d)"
_PATTERNS = [  # most specific first; each match's text is consumed
    ("dmy", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH},?\s+{_YEAR}\b")),
    ("mdy", re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_YEAR}\b")),
    ("my", re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b")),
    ("sy", re.compile(rf"\b(spring|summer|autumn|fall|winter)\s+(?:of\s+)?{_YEAR}\b", re.I)),
    ("m", re.compile(rf"\b{_MONTH}\b")),
    ("y", re.compile(rf"\b{_YEAR}\b")),
]


@dataclass(frozen=True)
class Span:
    """A closed span of days ``[first, last]``; ``year=None`` means any year (a bare month)."""

    first: date
    last: date
    any_year: bool = False


def _month_number(text: str) -> int:
    return _MONTHS.get(text.lower().rstrip("."), 5 if text.startswith("May") else 0)


def _month_span(year: int, month: int, months: int = 1, any_year: bool = False) -> Span:
    end_month = month + months - 1
    end_year, end_month = year + (end_month - 1) // 12, (end_month - 1) % 12 + 1
    last = date(end_year, end_month, calendar.monthrange(end_year, end_month)[1])
    return Span(date(year, month, 1), last, any_year)


def named_spans(question: str) -> list[Span]:
    """Absolute time spans named in ``question``, most specific first.

    Examples:
        >>> named_spans("What did Melanie show on October 13, 2023?")
        [Span(first=datetime.date(2023, 10, 13), last=datetime.date(2023, 10, 13), any_year=False)]
        >>> [(s.first.isoformat(), s.last.isoformat()) for s in named_spans("camping in June 2023 or in 2022")]
        [('2023-06-01', '2023-06-30'), ('2022-01-01', '2022-12-31')]
        >>> named_spans("May I ask what you may do?")
        []
    """
    spans: list[Span] = []
    text = question
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            g = match.groups()
            try:
                if kind == "dmy":
                    day = date(int(g[2]), _month_number(g[1]), int(g[0]))
                    spans.append(Span(day, day))
                elif kind == "mdy":
                    day = date(int(g[2]), _month_number(g[0]), int(g[1]))
                    spans.append(Span(day, day))
                elif kind == "my":
                    spans.append(_month_span(int(g[1]), _month_number(g[0])))
                elif kind == "sy":
                    lo, hi = _SEASONS[g[0].lower()]
                    spans.append(_month_span(int(g[1]), lo, hi - lo + 1))
                elif kind == "m":
                    if g[0] == "May" and match.start() == 0:
                        continue  # "May I …"
                    spans.append(_month_span(2000, _month_number(g[0]), any_year=True))
                else:
                    spans.append(Span(date(int(g[0]), 1, 1), date(int(g[0]), 12, 31)))
            except ValueError:  # "February 30, 2023": not a date
                continue
        text = pattern.sub(" ", text)
    return spans


def _days_outside(day: date, span: Span) -> int:
    first, last = span.first, span.last
    if span.any_year:  # the same month in the entry's own year
        first, last = first.replace(year=day.year), last.replace(year=day.year)
    if day < first:
        return (first - day).days
    return max(0, (day - last).days)


def closeness(dates: list[datetime | None], spans: list[Span], scale_days: float = 14.0) -> np.ndarray:
    """Per date: ``exp(-days outside the nearest span / scale_days)``; 0 for undated or no spans.

    >>> from datetime import datetime
    >>> spans = named_spans("in May 2023")
    >>> closeness([datetime(2023, 5, 8), datetime(2023, 6, 14), None], spans, 14.0).round(3).tolist()
    [1.0, 0.368, 0.0]
    """
    out = np.zeros(len(dates))
    if not spans:
        return out
    for i, when in enumerate(dates):
        if when is not None:
            day = when.date()
            out[i] = np.exp(-min(_days_outside(day, s) for s in spans) / scale_days)
    return out


