"""Paired comparisons: hand-computed cases, a known effect, the false-positive rate, clustering and seeds."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab._registry import ConfigError
from lyra_lab.stats import PairedComparison, compare, compare_all, holm, sign_flip_p

A, B, C = "chunks|bm25", "chunks|dense", "digests|dense"


def frame(values: dict[str, dict[tuple[str, str], float]], metric: str = "m", seed: int = 0) -> pd.DataFrame:
    """Tidy rows from {pipeline: {(conversation, probe): value}}."""
    return pd.DataFrame([{"pipeline": p, "backend": "fake", "embedder": "hashing", "seed": seed,
                          "conversation_id": conv, "probe_id": probe, "metric": metric, "value": v}
                         for p, by_probe in values.items() for (conv, probe), v in by_probe.items()])


def tiny() -> pd.DataFrame:
    """Four conversations; A − B per probe and per conversation sum:

    c1: q1 1−0 = 1, q2 1−1 = 0  → 1
    c2: q3 1−0 = 1              → 1
    c3: q4 0−1 = −1, q5 1−0 = 1 → 0
    c4: q6 1−0 = 1              → 1
    q7 only A scored, q8 B's value is NaN: both dropped.
    """
    a = {("c1", "q1"): 1, ("c1", "q2"): 1, ("c2", "q3"): 1, ("c3", "q4"): 0, ("c3", "q5"): 1, ("c4", "q6"): 1,
         ("c4", "q7"): 1, ("c4", "q8"): 0}
    b = {("c1", "q1"): 0, ("c1", "q2"): 1, ("c2", "q3"): 0, ("c3", "q4"): 1, ("c3", "q5"): 0, ("c4", "q6"): 0,
         ("c4", "q8"): np.nan}
    return frame({A: a, B: b})


def test_hand_computed_difference_and_exact_sign_flip_p():
    """difference = (1 + 0 + 1 − 1 + 1 + 1) / 6 = 0.5.

    Sign flips of the conversation sums (1, 1, 0, 1): |±1 ±1 ±0 ±1| ≥ 3 only when the
    three non-zero signs agree (2 ways) × either sign of c3's 0 (2 ways) = 4 of 16 → p = 0.25.
    Resampled means lie between c3 alone (0) and c2 or c4 alone (1).
    """
    result = compare(tiny(), A, B, "m", n_boot=500)
    assert isinstance(result, PairedComparison)
    assert result.difference == pytest.approx(0.5)
    assert result.p_value == pytest.approx(4 / 16)
    assert (result.n_probes, result.n_clusters, result.n_dropped) == (6, 4, 2)
    assert 0.0 <= result.ci_low <= 0.5 <= result.ci_high <= 1.0 and result.ci_low < result.ci_high
    assert "exact sign-flip" in result.method and "16 sign patterns" in result.method
    # B − A mirrors it
    back = compare(tiny(), B, A, "m", n_boot=500)
    assert back.difference == pytest.approx(-0.5) and back.p_value == pytest.approx(0.25)
    row = result.to_row()
    assert row["difference"] == result.difference and result.to_frame().shape == (1, len(row))


def test_hand_computed_unclustered_p():
    """Each probe its own cluster: differences (1, 0, 1, −1, 1, 1), observed sum 3.

    The five ±1 give sum 2k − 5 for k plus signs; |2k − 5| ≥ 3 for k ∈ {0, 1, 4, 5}:
    1 + 5 + 5 + 1 = 12 of 32 patterns (the 0 doubles both counts) → p = 12 / 32 = 0.375.
    """
    result = compare(tiny(), A, B, "m", cluster=None, n_boot=200)
    assert result.p_value == pytest.approx(0.375)
    assert (result.n_probes, result.n_clusters) == (6, 6) and "64 sign patterns" in result.method


def test_seeds_average_within_a_probe():
    """q1 under seed 0: 1 − 0 = 1; under seed 1: 0 − 0 = 0 → the probe's difference is 0.5, counted once.

    q2 (seed 0 only): 1 − 1 = 0.  Mean over the two probes = (0.5 + 0) / 2 = 0.25.
    """
    rows = pd.concat([frame({A: {("c1", "q1"): 1, ("c2", "q2"): 1}, B: {("c1", "q1"): 0, ("c2", "q2"): 1}}),
                      frame({A: {("c1", "q1"): 0}, B: {("c1", "q1"): 0}}, seed=1)])
    result = compare(rows, A, B, "m", n_boot=100)
    assert result.difference == pytest.approx(0.25) and result.n_probes == 2 and result.n_dropped == 0


def test_holm_by_hand():
    """Sorted p 0.01, 0.03, 0.04 (m = 3): 3·0.01 = 0.03; 2·0.03 = 0.06; 1·0.04 = 0.04 → max so far 0.06."""
    assert holm([0.01, 0.04, 0.03, np.nan]) == pytest.approx([0.03, 0.06, 0.06, np.nan], nan_ok=True)
    assert holm([0.5, 0.9]).tolist() == [1.0, 1.0]  # capped at 1


def test_compare_all_marks_the_significantly_worse():
    """Ten conversations of one probe each.  Best A = 1 everywhere; C = A; B = A − 1 everywhere.

    B vs A: all ten sums are −1; only the two all-equal sign patterns reach |−10| → p = 2 / 1024.
    C vs A: every difference 0 → p = 1.  Holm over 2: B 2 · 2/1024 = 0.0039 < 0.05 → worse; C 1.
    """
    probes = {(f"c{i}", f"q{i}"): 1.0 for i in range(10)}
    df = frame({A: probes, B: {k: 0.0 for k in probes}, C: probes})
    table = compare_all(df, "m", n_boot=200).set_index("pipeline")
    assert table["best"].unique().tolist() == [A] and table.index[0] == A  # ties broken by name
    assert table.loc[B, "p_value"] == pytest.approx(2 / 1024)
    assert table.loc[B, "p_holm"] == pytest.approx(4 / 1024)
    assert table.loc[B, "difference"] == -1.0 and not table.loc[B, "not_worse_than_best"]
    assert table.loc[C, "p_holm"] == 1.0 and bool(table.loc[C, "not_worse_than_best"])
    assert bool(table.loc[A, "not_worse_than_best"]) and np.isnan(table.loc[A, "p_value"])
    assert table.loc[B, "n_probes"] == 10 and table.loc[B, "n_clusters"] == 10


def test_bad_input_is_one_clear_config_error():
    df = tiny()
    with pytest.raises(ConfigError, match=r"unknown pipeline 'nope'; the results have: chunks\|bm25, chunks\|dense"):
        compare(df, "nope", B, "m")
    with pytest.raises(ConfigError, match="unknown metric 'recall@5'; the results have: m"):
        compare(df, A, B, "recall@5")
    with pytest.raises(ConfigError, match="two different pipelines"):
        compare(df, A, A, "m")
    with pytest.raises(ConfigError, match="cannot cluster by 'room'"):
        compare(df, A, B, "m", cluster="room")
    with pytest.raises(ConfigError, match="mix variants"):
        compare(pd.concat([df, df]), A, B, "m")
    with pytest.raises(ConfigError, match=r"pipeline 'digests\|dense' has no per-probe 'm' values"):
        compare(pd.concat([df, frame({C: {("c1", "q1"): 1.0}}, metric="other")]), A, C, "m")
    disjoint = frame({A: {("c1", "q1"): 1.0}, B: {("c2", "q2"): 0.0}})
    with pytest.raises(ConfigError, match="share no probe"):
        compare(disjoint, A, B, "m")


def test_pipelines_under_several_backends_are_told_apart():
    df = pd.concat([tiny(), tiny().assign(backend="local")])
    with pytest.raises(ConfigError, match="ambiguous.*chunks\\|bm25\\|backend=fake"):
        compare(df, A, B, "m")
    same = compare(df, f"{A}|backend=fake", f"{A}|backend=local", "m", n_boot=50)
    assert same.difference == 0 and same.p_value == 1.0
    only_one = tiny().assign(backend="local")
    assert compare(only_one, A, B, "m", n_boot=50).difference == pytest.approx(0.5)  # bare name when unambiguous


def synthetic(rng: np.random.Generator, effect: float, n_clusters: int, per_cluster: int,
              cluster_sd: float = 1.0, noise_sd: float = 1.0) -> pd.DataFrame:
    """A − B = effect + a per-conversation shift (shared by its probes) + per-probe noise."""
    shift = np.repeat(rng.normal(0, cluster_sd, n_clusters), per_cluster)
    diff = effect + shift + rng.normal(0, noise_sd, n_clusters * per_cluster)
    base = rng.normal(0, 1, diff.size)
    conv = np.repeat([f"c{i}" for i in range(n_clusters)], per_cluster)
    probe = [f"q{i}" for i in range(diff.size)]
    common = {"seed": 0, "conversation_id": conv, "probe_id": probe, "metric": "m"}
    return pd.concat([pd.DataFrame({"pipeline": A, **common, "value": base + diff}),
                      pd.DataFrame({"pipeline": B, **common, "value": base})], ignore_index=True)


def test_known_effect_is_found():
    result = compare(synthetic(np.random.default_rng(1), 0.8, 30, 5), A, B, "m", n_boot=1000)
    assert result.ci_low > 0 and result.p_value < 0.05
    assert "Monte Carlo" in result.method  # 30 clusters: too many to enumerate


def binomial_band(n: int, p: float, level: float = 0.999) -> tuple[int, int]:
    """The central ``level`` interval of Binomial(n, p): P(X < lo) ≤ tail and P(X > hi) ≤ tail."""
    pmf = [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]
    tail = (1 - level) / 2
    cdf = np.cumsum(pmf)
    lo = int(np.searchsorted(cdf, tail, side="right"))  # first k with P(X ≤ k) > tail
    hi = int(np.searchsorted(cdf, 1 - tail, side="left"))  # first k with P(X ≤ k) ≥ 1 − tail
    return lo, hi


def test_binomial_band_by_hand():
    # Binomial(4, 0.5): P(X=0) = 1/16 = 0.0625 > 0.0005, so nothing is cut at level 0.999: [0, 4]
    assert binomial_band(4, 0.5) == (0, 4)
    # level 0.8 → tail 0.1: P(X ≤ 0) = 0.0625 ≤ 0.1, P(X ≤ 1) = 0.3125 > 0.1 → lo = 1; symmetric hi = 3
    assert binomial_band(4, 0.5, 0.8) == (1, 3)


def rejections(cluster: str | None, n_datasets: int, seed: int = 7) -> int:
    """How many of ``n_datasets`` null datasets (no effect) give p < 0.05."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(n_datasets):
        df = synthetic(rng, 0.0, 12, 8, cluster_sd=1.0, noise_sd=1.0)
        hits += compare(df, A, B, "m", cluster=cluster, n_boot=20, n_perm=500).p_value < 0.05
    return hits


def test_no_effect_rejects_about_five_percent_when_clustered():
    """400 null datasets of 12 conversations × 8 probes with a strong conversation effect.

    Clustered (exact, 4096 sign patterns) the rejections at α = 0.05 fall in the 99.9% band
    of Binomial(400, 0.05).
    """
    lo, hi = binomial_band(400, 0.05)
    # for the reader: P(X ≤ 6) = 0.0002, P(X ≤ 7) = 0.0006; P(X > 35) = 0.0006, P(X > 36) = 0.0003
    assert (lo, hi) == (7, 36)  # 1.75% – 9%
    assert lo <= rejections("conversation", 400) <= hi


def test_unclustered_test_over_rejects_on_the_same_null_data():
    """Treating the 96 probes as independent ignores that a conversation's probes share its
    shift: on the same kind of null data the rejections exceed the 99.9% band of Binomial(100, 0.05)."""
    lo, hi = binomial_band(100, 0.05)
    assert rejections(None, 100) > hi


def test_duplicating_rows_under_three_seeds_does_not_shrink_the_interval():
    df = synthetic(np.random.default_rng(3), 0.2, 8, 4)
    tripled = pd.concat([df.assign(seed=s) for s in (0, 1, 2)], ignore_index=True)
    for cluster in ("conversation", None):
        once = compare(df, A, B, "m", cluster=cluster, n_boot=300, n_perm=300)
        thrice = compare(tripled, A, B, "m", cluster=cluster, n_boot=300, n_perm=300)
        assert thrice.n_probes == once.n_probes == 32
        assert (thrice.ci_low, thrice.ci_high, thrice.p_value) == pytest.approx((once.ci_low, once.ci_high,
                                                                                once.p_value))


def test_one_conversation_gives_no_interval():
    df = synthetic(np.random.default_rng(0), 0.5, 1, 6)
    result = compare(df, A, B, "m", n_boot=50)
    assert np.isnan(result.ci_low) and np.isnan(result.ci_high)
    assert result.p_value == 1.0 and "one cluster" in result.method  # 2 patterns, both reach |S|


def test_sign_flip_p_monte_carlo_agrees_with_exact(monkeypatch):
    from lyra_lab.stats import _compare

    sums = np.array([1.0, 2.0, -0.5, 3.0, 0.7, 1.1, -0.2, 0.4, 2.2, 0.9])
    exact, how = sign_flip_p(sums)
    assert "1024 sign patterns" in how
    # the exact p by counting the 1024 patterns one by one
    count = sum(abs(sum(s * (1 - 2 * ((i >> j) & 1)) for j, s in enumerate(sums))) >= abs(sums.sum()) - 1e-12
                for i in range(1024))
    assert exact == pytest.approx(count / 1024)
    monkeypatch.setattr(_compare, "EXACT_MAX_CLUSTERS", 5)
    drawn, how = sign_flip_p(sums, n_perm=20_000, seed=1)
    assert "Monte Carlo" in how
    assert abs(drawn - exact) < 5 * math.sqrt(exact * (1 - exact) / 20_000)  # within 5 Monte Carlo SEs


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=12))
def test_swapping_a_and_b_negates_the_difference_and_keeps_p(cells):
    """Probe i in conversation c with values (a, b): A − B and B − A are mirror images."""
    a = {(f"c{c}", f"q{i}"): x for i, (c, x, _) in enumerate(cells)}
    b = {(f"c{c}", f"q{i}"): y for i, (c, _, y) in enumerate(cells)}
    df = frame({A: a, B: b})
    ab, ba = compare(df, A, B, "m", n_boot=50), compare(df, B, A, "m", n_boot=50)
    assert ab.difference == pytest.approx(-ba.difference, abs=1e-12)
    assert ab.p_value == pytest.approx(ba.p_value) and 0 < ab.p_value <= 1
    assert ab.difference == pytest.approx(np.mean([x - y for _, x, y in cells]), abs=1e-12)
    if ab.n_clusters > 1:  # the interval mirrors too (the same resamples, negated)
        assert (ab.ci_low, ab.ci_high) == pytest.approx((-ba.ci_high, -ba.ci_low), abs=1e-12)
