"""Per-level statistics on a hand-made records frame match hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from lyra_lab.bench import COLUMNS, SUMMARY_COLUMNS, error_counts, percentile, summarize
from lyra_lab.bench._results import coerce


def _row(level, seq, start, end, ok=True, status="ok", attempts=1, completion=10, ttft=None, mode="closed",
         label="b/m"):
    return {"label": label, "backend": "b", "model": "m", "simulated": False, "mode": mode, "level": level,
            "seq": seq, "prompt_id": f"p{seq}", "start_s": start, "sent_s": start, "end_s": end,
            "latency_s": end - start, "service_s": end - start, "ttft_s": ttft,
            "prompt_tokens": 100 if ok else 0, "completion_tokens": completion if ok else 0, "ok": ok,
            "status": status, "attempts": attempts}


@pytest.fixture()
def records():
    rows = [
        # level 1: four ok requests back to back, latencies 1, 2, 3, 4 s; the level lasts 10 s
        _row(1, 0, 0.0, 1.0, ttft=0.2), _row(1, 1, 1.0, 3.0, ttft=0.4), _row(1, 2, 3.0, 6.0, ttft=0.6),
        _row(1, 3, 6.0, 10.0, ttft=None),
        # level 4: 3 ok (latency 1 s each, 20 tokens), a 429 after 3 attempts, a timeout; lasts 2 s
        _row(4, 0, 0.0, 1.0, completion=20), _row(4, 1, 0.0, 1.0, completion=20, attempts=2),
        _row(4, 2, 1.0, 2.0, completion=20), _row(4, 3, 0.0, 1.5, ok=False, status="429", attempts=3),
        _row(4, 4, 0.5, 1.8, ok=False, status="no-status", attempts=1),
    ]
    return coerce(pd.DataFrame(rows, columns=list(COLUMNS)))


def test_summary_matches_hand_computed_values(records):
    s = summarize(records).set_index("level")
    assert list(summarize(records).columns) == SUMMARY_COLUMNS
    one, four = s.loc[1.0], s.loc[4.0]
    assert (one["requests"], one["ok"], one["errors"]) == (4, 4, 0)
    assert one["duration_s"] == pytest.approx(10.0)
    assert one["throughput_rps"] == pytest.approx(0.4)
    assert one["completion_tps"] == pytest.approx(4.0)
    # numpy linear interpolation over [1, 2, 3, 4]: p50 = 2.5, p95 = 3 + 0.85, p99 = 3 + 0.97
    assert one["latency_p50_s"] == pytest.approx(2.5)
    assert one["latency_p95_s"] == pytest.approx(3.85)
    assert one["latency_p99_s"] == pytest.approx(3.97)
    assert not one["tokens_estimated"]  # the server reported usage
    assert one["ttft_p50_s"] == pytest.approx(0.4)  # the missing ttft is ignored, not counted as 0
    assert (four["requests"], four["ok"], four["errors"]) == (5, 3, 2)
    assert four["error_rate"] == pytest.approx(0.4)
    assert four["errors_by_status"] == "429:1 no-status:1"
    assert four["retried"] == 2
    assert four["mean_attempts"] == pytest.approx((1 + 2 + 1 + 3 + 1) / 5)
    assert four["throughput_rps"] == pytest.approx(1.5)  # 3 ok in 2 s; failures do not count
    assert four["completion_tps"] == pytest.approx(30.0)
    assert four["latency_p50_s"] == pytest.approx(1.0)  # failed requests' latencies are excluded
    # nothing streamed at this level: vLLM's 0 for an empty series, and ``streamed`` says it is no measure
    assert four["ttft_p50_s"] == 0.0 and four["streamed"] == 0 and one["streamed"] == 3


def test_levels_are_sorted_and_labels_kept_apart(records):
    other = records.assign(label="z/other")
    mixed = pd.concat([other, records.iloc[::-1]], ignore_index=True)
    s = summarize(mixed)
    assert list(zip(s["label"], s["level"])) == [
        ("b/m", 1.0), ("b/m", 4.0), ("z/other", 1.0), ("z/other", 4.0)]


def test_error_counts_is_long_and_counts_failures_only(records):
    e = error_counts(records)
    assert sorted(zip(e["level"], e["status"], e["count"])) == [(4.0, "429", 1), (4.0, "no-status", 1)]


def test_percentile_of_nothing_is_nan_and_matches_numpy():
    assert math.isnan(percentile(pd.Series([], dtype=float), 50))
    values = pd.Series([5.0, None, 1.0, 9.0, 3.0])
    assert percentile(values, 95) == pytest.approx(np.percentile([5, 1, 9, 3], 95))
