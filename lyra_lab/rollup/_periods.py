"""Period keys for rollup digests: day ``2023-05-08``, ISO week ``2023-W19``, month ``2023-05``.

Keys are computed in UTC from aware datetimes, so a replay gives the same
digests wherever it runs.

>>> from datetime import datetime, timezone
>>> t = datetime(2023, 5, 8, 23, 30, tzinfo=timezone.utc)
>>> [period_key(t, g) for g in GRAINS]
['2023-05-08', '2023-W19', '2023-05']
>>> period_key(datetime(2021, 1, 1, tzinfo=timezone.utc), "week")  # ISO week of the previous year
'2020-W53'
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone
from typing import Literal, get_args

#: A period's length: day ``2023-05-08``, ISO week ``2023-W19`` or month ``2023-05``.
Grain = Literal["day", "week", "month"]
GRAINS: tuple[Grain, ...] = get_args(Grain)

_PATTERNS: dict[Grain, re.Pattern[str]] = {
    "day": re.compile(r"^\d{4}-\d{2}-\d{2}$"),
    "week": re.compile(r"^\d{4}-W\d{2}$"),
    "month": re.compile(r"^\d{4}-\d{2}$"),
}


def _utc(ts: datetime) -> datetime:
    if ts.tzinfo is None:
        raise ValueError(f"period keys need an aware datetime (UTC), got naive {ts.isoformat()}")
    return ts.astimezone(timezone.utc)


def period_key(ts: datetime, grain: Grain) -> str:
    """The key of the ``grain`` period holding ``ts``."""
    ts = _utc(ts)
    if grain == "day":
        return ts.date().isoformat()
    if grain == "week":
        iso = ts.isocalendar()
        return f"{iso.year:04d}-W{iso.week:02d}"
    if grain == "month":
        return f"{ts.year:04d}-{ts.month:02d}"
    raise ValueError(f"grain must be one of {GRAINS}, got {grain!r}")


def period_grain(key: str) -> Grain:
    """Which grain a key is (``day``, ``week`` or ``month``)."""
    for grain, pattern in _PATTERNS.items():
        if pattern.match(key):
            return grain
    raise ValueError(f"not a period key: {key!r}")


def period_bounds(key: str) -> tuple[datetime, datetime]:
    """``[start, end)`` of a period as aware UTC datetimes.

    Examples:
        >>> [t.date().isoformat() for t in period_bounds("2023-W19")]
        ['2023-05-08', '2023-05-15']
    """
    grain = period_grain(key)
    if grain == "day":
        start = date.fromisoformat(key)
        stop = start + timedelta(days=1)
    elif grain == "week":
        iso_year, iso_week = key.split("-W")
        start = date.fromisocalendar(int(iso_year), int(iso_week), 1)
        stop = start + timedelta(days=7)
    else:
        year, month = (int(p) for p in key.split("-"))
        start = date(year, month, 1)
        stop = date(year + month // 12, month % 12 + 1, 1)
    as_dt = lambda d: datetime(d.year, d.month, d.day, tzinfo=timezone.utc)  # noqa: E731
    return as_dt(start), as_dt(stop)


def in_period(ts: datetime, key: str) -> bool:
    """Whether ``ts`` falls inside the period ``key``."""
    start, stop = period_bounds(key)
    return start <= _utc(ts) < stop
