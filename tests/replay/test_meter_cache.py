"""Cache hits keep the figures they had when paid; ``paid_*`` columns say what this run paid."""

import pytest

from lyra_lab.backends._types import Completion, Usage
from lyra_lab.experiments.cells._cell import phase_metrics
from lyra_lab.replay import PhaseMeter


def completion(latency, cost, cached):
    usage = Usage(prompt_tokens=100, completion_tokens=10, cost_usd=cost, calls=1, cached_calls=int(cached))
    return Completion("text", usage, latency, "fake", "m", cached=cached)


def metrics(calls, wall):
    meter = PhaseMeter()
    meter.wall("summarize", wall)
    meter.completions("summarize", calls)
    return phase_metrics(meter.phases(("summarize",)))


def test_a_rerun_from_the_cache_reports_the_paid_figures():
    fresh = metrics([completion(4.0, 0.01, False), completion(6.0, 0.02, False)], wall=10.2)
    rerun = metrics([completion(4.0, 0.01, True), completion(6.0, 0.02, True)], wall=0.01)
    for m in fresh:
        if not m.startswith("summarize.paid_") and m != "summarize.cached_calls":
            assert rerun[m] == pytest.approx(fresh[m]), m
    assert fresh["summarize.latency_s"] == pytest.approx(10.0)  # sum of per-call latencies
    assert fresh["summarize.paid_latency_s"] == pytest.approx(10.2)
    assert fresh["summarize.paid_cost_usd"] == pytest.approx(0.03) and fresh["summarize.cached_calls"] == 0
    assert rerun["summarize.paid_latency_s"] == pytest.approx(0.01)
    assert rerun["summarize.paid_cost_usd"] == 0 and rerun["summarize.cached_calls"] == 2


def test_half_cached():
    out = metrics([completion(4.0, 0.01, True), completion(6.0, 0.02, False)], wall=6.1)
    assert out["summarize.cost_usd"] == pytest.approx(0.03) and out["summarize.paid_cost_usd"] == pytest.approx(0.02)
    assert out["summarize.cached_calls"] == 1 and out["summarize.latency_s"] == pytest.approx(10.0)


def test_a_phase_without_calls_reports_its_wall_time():
    meter = PhaseMeter()
    meter.wall("rollup", 0.5)
    out = phase_metrics(meter.phases(("rollup",)))
    assert out["rollup.latency_s"] == out["rollup.paid_latency_s"] == 0.5 and out["rollup.cached_calls"] == 0
