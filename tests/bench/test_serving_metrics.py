"""vLLM's serving metrics (TTFT, TPOT, ITL, E2EL, goodput) on hand-built records match hand-computed values.

The differential check against a rewrite of vLLM's own rules is ``test_vllm_serving_rules.py``.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.bench import COLUMNS, chunk_metrics, goodput, parse_slo, summarize, tpot
from lyra_lab.bench._results import coerce


def _row(seq, start, end, chunks=(), completion=5, ok=True):
    """One record; a streamed one's TTFT/ITL/TPOT from its choice-chunk times, as the sweep records them."""
    timed = chunk_metrics(chunks, completion)
    return {"label": "b/m", "backend": "b", "model": "m", "simulated": False, "mode": "closed", "level": 2.0,
            "seq": seq, "prompt_id": f"p{seq}", "start_s": start, "sent_s": start, "end_s": end,
            "latency_s": end - start, "service_s": end - start, "prompt_tokens": 10 if ok else 0,
            "completion_tokens": completion if ok else 0, "ok": ok, "status": "ok" if ok else "503",
            "attempts": 1, **timed}


@pytest.fixture()
def records():
    rows = [
        # ttft 0.1, chunks every 0.1 s to 0.5 s, 5 tokens: tpot (0.5 - 0.1) / 4 = 0.1; latency 0.5
        _row(0, 0.0, 0.5, chunks=(0.1, 0.2, 0.3, 0.4, 0.5)),
        # ttft 0.3, two chunks holding 5 tokens: one ITL of 0.6; tpot (0.9 - 0.3) / 4 = 0.15; E2EL 0.9 (to the
        # last chunk), though the call returned at 1.0
        _row(1, 0.0, 1.0, chunks=(0.3, 0.9)),
        # one output token: no TPOT (vLLM leaves it out of TPOT, counts it 0 for goodput); latency 0.2
        _row(2, 0.5, 0.7, chunks=(0.2,), completion=1),
        # a failed request: in no metric, not in goodput
        _row(3, 1.0, 2.0, chunks=(0.01, 0.02), ok=False),
    ]
    return coerce(pd.DataFrame(rows, columns=list(COLUMNS)))


def test_tpot_excludes_the_first_token():
    assert tpot(1.0, 0.2, 5) == pytest.approx(0.2)  # (1.0 - 0.2) / (5 - 1)
    assert math.isnan(tpot(1.0, 0.2, 1))
    assert math.isnan(tpot(1.0, None, 5))


def test_chunk_metrics_time_ttft_and_each_gap_from_the_chunks():
    got = chunk_metrics((0.3, 0.5, 1.0), 9)
    assert got["ttft_s"] == pytest.approx(0.3)
    assert got["itl_s"] == pytest.approx([0.2, 0.5])
    assert got["tpot_s"] == pytest.approx((1.0 - 0.3) / 8)
    assert got["e2el_s"] == pytest.approx(1.0)  # vLLM's request end: the last chunk carrying choices
    nan = pytest.approx(float("nan"), nan_ok=True)
    assert chunk_metrics((), 9) == {"ttft_s": None, "itl_s": [], "tpot_s": nan, "e2el_s": nan}
    assert chunk_metrics((), 9, 0.4)["e2el_s"] == 0.4  # not streamed: the body's last byte


def test_percentiles_pool_itl_over_requests_and_skip_failures(records):
    s = summarize(records).iloc[0]
    # TTFT over ok requests [0.1, 0.3, 0.2], numpy linear interpolation
    assert s["ttft_p50_s"] == pytest.approx(0.2)
    assert s["ttft_p90_s"] == pytest.approx(0.2 + 0.8 * 0.1)
    assert s["ttft_mean_s"] == pytest.approx(0.2)
    # TPOT over requests with > 1 token: [0.1, 0.15]
    assert s["tpot_p50_s"] == pytest.approx(0.125)
    assert s["tpot_p99_s"] == pytest.approx(0.1 + 0.99 * 0.05)
    # ITL pooled: four gaps of 0.1 and one of 0.6 (the failed request's gap is not in)
    assert s["itl_p50_s"] == pytest.approx(0.1)
    assert s["itl_p90_s"] == pytest.approx(0.1 + 0.6 * 0.5)
    assert s["itl_mean_s"] == pytest.approx(1.0 / 5)
    # E2EL over ok requests [0.5, 0.9, 0.2], each to its last chunk; latency_p50_s as the caller felt it
    assert s["e2el_p50_s"] == pytest.approx(0.5)
    assert s["e2el_p99_s"] == pytest.approx(0.5 + 0.98 * 0.4)
    assert s["latency_p99_s"] == pytest.approx(0.5 + 0.98 * 0.5)
    # the level spans 0.0 to 2.0 s: 3 ok requests, 11 completion tokens, 30 prompt tokens
    assert s["throughput_rps"] == pytest.approx(1.5)
    assert s["completion_tps"] == pytest.approx(5.5)
    assert s["total_tps"] == pytest.approx(20.5)
    assert math.isnan(s["goodput_rps"])  # no SLO given


@pytest.mark.parametrize(("slo", "good"), [
    ({"ttft": 0.25}, 2),  # 0.1 and 0.2 meet it (<=), 0.3 does not
    ({"ttft": 0.3}, 3),  # a value equal to the target meets it
    ({"tpot": 0.12}, 2),  # 0.1 meets, 0.15 not, the one-token request counts TPOT 0
    ({"ttft": 0.25, "tpot": 0.12}, 2),
    ({"ttft": 0.25, "e2el": 0.4}, 1),  # every target at once: only the one-token request (0.2 s, ttft 0.2)
])
def test_goodput_counts_requests_meeting_every_target(records, slo, good):
    s = summarize(records, slo).iloc[0]
    assert s["goodput_rps"] == pytest.approx(good / 2.0)
    ok = records[records["ok"]]
    assert goodput(ok, 2.0, slo) == pytest.approx(good / 2.0)


def test_goodput_is_unknown_when_a_target_metric_was_not_measured(records):
    unstreamed = records.assign(ttft_s=float("nan"))
    assert math.isnan(summarize(unstreamed, {"ttft": 1.0}).iloc[0]["goodput_rps"])
    assert summarize(unstreamed, {"e2el": 1.0}).iloc[0]["goodput_rps"] == pytest.approx(1.5)


def test_parse_slo_reads_seconds_and_rejects_bad_targets():
    assert parse_slo("ttft=0.5,tpot=0.05") == {"ttft": 0.5, "tpot": 0.05}
    assert parse_slo(" E2EL = 2 ") == {"e2el": 2.0}
    for bad in ("ttft", "itl=0.1", "ttft=fast", "ttft=0", "ttft=-1", ",", "ttft=inf"):
        with pytest.raises(ConfigError, match="--slo"):
            parse_slo(bad)


def test_records_saved_before_the_serving_columns_still_load(records):
    old = records.drop(columns=["tpot_s", "itl_s"])
    back = coerce(old)
    assert list(back.columns) == list(COLUMNS)
    assert back["itl_s"].map(len).sum() == 0
    assert back["tpot_s"].isna().all()
