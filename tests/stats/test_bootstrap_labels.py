"""Bootstrap CIs (contain the mean, narrow with n, reproducible), aggregate, category labels."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab._registry import ConfigError
from lyra_lab.reports import LOCOMO_LABELS, label_categories
from lyra_lab.stats import aggregate, bootstrap_ci, cluster_bootstrap_ci


def test_small_hand_cases():
    # one value: the interval is the value; none: NaN; NaNs are dropped
    assert bootstrap_ci([0.7]) == (0.7, 0.7, 0.7, 1)
    empty = bootstrap_ci([])
    assert empty.n == 0 and math.isnan(empty.mean)
    assert bootstrap_ci([1.0, float("nan"), 0.0]).n == 2
    # constant values: every resample mean is that constant
    ci = bootstrap_ci([0.5] * 10)
    assert (ci.mean, ci.low, ci.high) == (0.5, 0.5, 0.5)


def test_binary_interval_close_to_normal_approximation():
    # 40 ones of 100: mean 0.4, se = sqrt(.4*.6/100) = 0.049 -> 95% about [0.30, 0.50]
    values = [1.0] * 40 + [0.0] * 60
    ci = bootstrap_ci(values, n_resamples=4000, seed=1)
    assert ci.mean == pytest.approx(0.4)
    assert ci.low == pytest.approx(0.40 - 1.96 * 0.049, abs=0.02)
    assert ci.high == pytest.approx(0.40 + 1.96 * 0.049, abs=0.02)


def test_narrows_with_n_and_is_reproducible():
    rng = np.random.default_rng(3)
    small = bootstrap_ci(rng.random(20))
    large = bootstrap_ci(rng.random(2000))
    assert (large.high - large.low) < (small.high - small.low) / 3  # ~sqrt(100)=10x narrower in theory
    values = rng.random(50)
    assert bootstrap_ci(values, seed=7) == bootstrap_ci(values, seed=7)
    assert bootstrap_ci(values, seed=7) != bootstrap_ci(values, seed=8)


def test_bad_parameters():
    with pytest.raises(ValueError):
        bootstrap_ci([1, 2], n_resamples=0)
    with pytest.raises(ValueError):
        bootstrap_ci([1, 2], confidence=1.0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=40), st.integers(0, 10))
def test_interval_contains_the_mean(values, seed):
    ci = bootstrap_ci(values, n_resamples=200, seed=seed)
    assert ci.mean == pytest.approx(float(np.mean(values)))
    tol = 1e-9 * (1 + abs(ci.mean))
    assert ci.low - tol <= ci.mean <= ci.high + tol
    assert min(values) - tol <= ci.low and ci.high <= max(values) + tol


def test_cluster_bootstrap_is_wider_when_clusters_differ():
    # two conversations with very different recall; many probes each
    values = [1.0] * 50 + [0.0] * 50
    clusters = ["a"] * 50 + ["b"] * 50
    plain = bootstrap_ci(values)
    clustered = cluster_bootstrap_ci(values, clusters)
    assert clustered.mean == plain.mean == 0.5 and clustered.n == 100
    # resampling 2 clusters gives means in {0, 0.5, 1}: the interval spans [0, 1]
    assert (clustered.low, clustered.high) == (0.0, 1.0)
    assert plain.high - plain.low < 0.3


def test_aggregate_groups_and_columns():
    df = pd.DataFrame({
        "pipeline": ["A", "A", "A", "B", "B", "A"],
        "metric": ["mrr", "mrr", "mrr", "mrr", "mrr", "recall@5"],
        "value": [1.0, 0.5, 0.0, 1.0, 1.0, 0.25],
    })
    out = aggregate(df, by=["pipeline"])
    assert list(out.columns) == ["pipeline", "metric", "mean", "ci_low", "ci_high", "n"]
    row = out[(out.pipeline == "A") & (out.metric == "mrr")].iloc[0]
    assert row["mean"] == pytest.approx(0.5) and row["n"] == 3  # (1 + .5 + 0) / 3
    assert row["ci_low"] <= 0.5 <= row["ci_high"]
    assert out[(out.pipeline == "B")].iloc[0][["mean", "ci_low", "ci_high", "n"]].tolist() == [1.0, 1.0, 1.0, 2]
    assert len(out) == 3
    with pytest.raises(KeyError, match="nope"):
        aggregate(df, by=["nope"])


def test_label_categories_keeps_the_integer():
    df = pd.DataFrame({"category": ["1", "4", "", "temporal", "9"], "value": [1, 2, 3, 4, 5]})
    paper = label_categories(df, "locomo_paper")
    assert paper["category"].tolist() == ["1", "4", "", "temporal", "9"]
    assert paper["category_label"].tolist() == ["1 multi-hop", "4 single-hop", "", "temporal", "9"]
    mem0 = label_categories(df, "mem0")
    assert mem0["category_label"].tolist()[:2] == ["1 single-hop", "4 open-domain"]
    assert LOCOMO_LABELS["mem0"][3] == "multi-hop"
    with pytest.raises(ConfigError, match="unknown category label scheme"):
        label_categories(df, "nope")


def test_aggregate_averages_seeds_within_a_probe():
    """q1 under seeds 0, 1, 2: 1, 0, 1 → 2/3; q2: 0, 0, 0 → 0.  Mean (2/3 + 0) / 2 = 1/3 over n = 2 probes."""
    df = pd.DataFrame([{"pipeline": "p", "conversation_id": "c", "probe_id": q, "seed": s, "metric": "m", "value": v}
                       for q, values in (("q1", (1, 0, 1)), ("q2", (0, 0, 0))) for s, v in enumerate(values)])
    out = aggregate(df, by=["pipeline"], n_resamples=200).iloc[0]
    assert out["mean"] == pytest.approx(1 / 3) and out["n"] == 2
    assert 0 <= out["ci_low"] and out["ci_high"] <= 2 / 3  # resampled means of the two probe averages
    per_seed = aggregate(df, by=["pipeline", "seed"])  # asked per seed: nothing averaged
    assert per_seed["n"].tolist() == [2, 2, 2] and per_seed["mean"].tolist() == [0.5, 0.0, 0.5]
