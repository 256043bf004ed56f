"""Period keys: day, ISO week and month of aware UTC datetimes."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings, strategies as st

from lyra_lab.rollup import GRAINS, in_period, period_bounds, period_grain, period_key

_aware = st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2090, 1, 1),
                      timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=-7)),
                                                 timezone(timedelta(hours=5, minutes=30))]))


def test_examples():
    t = datetime(2023, 5, 8, 23, 59, tzinfo=timezone.utc)
    assert [period_key(t, g) for g in GRAINS] == ["2023-05-08", "2023-W19", "2023-05"]
    # 2023-05-08 22:00 at UTC-7 is 2023-05-09 05:00 UTC: keys are UTC.
    assert period_key(datetime(2023, 5, 8, 22, tzinfo=timezone(timedelta(hours=-7))), "day") == "2023-05-09"
    assert period_key(datetime(2024, 12, 30, tzinfo=timezone.utc), "week") == "2025-W01"
    assert period_bounds("2023-12") == (datetime(2023, 12, 1, tzinfo=timezone.utc),
                                        datetime(2024, 1, 1, tzinfo=timezone.utc))


def test_rejects_naive_datetimes_and_bad_keys():
    with pytest.raises(ValueError, match="aware"):
        period_key(datetime(2023, 5, 8), "day")
    with pytest.raises(ValueError, match="grain"):
        period_key(datetime(2023, 5, 8, tzinfo=timezone.utc), "year")
    with pytest.raises(ValueError, match="not a period key"):
        period_grain("May 2023")


@settings(max_examples=200, deadline=None)
@given(ts=_aware, grain=st.sampled_from(GRAINS))
def test_a_timestamp_lies_in_its_period_and_periods_nest(ts, grain):
    key = period_key(ts, grain)
    assert period_grain(key) == grain and in_period(ts, key)
    start, stop = period_bounds(key)
    assert period_key(start, grain) == key and period_key(stop - timedelta(microseconds=1), grain) == key
    assert period_key(stop, grain) != key
    if grain == "day":  # days nest in weeks and months
        assert all(in_period(start, period_key(ts, g)) for g in GRAINS)
