"""The price table: lookups, snapshots, overrides, unknown models."""

from __future__ import annotations

import pytest

from lyra_lab.backends import PRICES, PRICES_AS_OF, Price, price_for


@pytest.mark.parametrize("model, family", [
    ("gpt-4o", "gpt-4o"), ("gpt-4o-2024-08-06", "gpt-4o"), ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
    ("openai/gpt-4.1-mini", "gpt-4.1-mini"), ("o3-mini-2025-01-31", "o3-mini"),
    ("GPT-4.1-NANO", "gpt-4.1-nano"), ("claude-sonnet-4-20250514", "claude-sonnet-4"),
    ("gpt-3.5-turbo", "gpt-3.5-turbo"), ("o4-mini", "o4-mini"),
])
def test_known_models_and_their_snapshots(model, family):
    price = price_for(model)
    assert price.known and (price.input_per_m, price.output_per_m) == PRICES[family]


@pytest.mark.parametrize("model", ["SmolLM2-135M-Instruct.Q4_1", "gpt-4o-audio-xyz", "o3-pro", "llama3.2:1b"])
def test_unknown_models_cost_zero_and_are_flagged(model):
    price = price_for(model)
    assert not price.known and price.cost(10**6, 10**6) == 0.0


def test_cost_arithmetic_and_overrides():
    assert Price("m", 2.5, 10.0).cost(1_000_000, 500_000) == pytest.approx(7.5)
    assert Price("m", 0.15, 0.60).cost(1234, 567) == pytest.approx((1234 * 0.15 + 567 * 0.60) / 1e6)
    assert price_for("my-model", overrides={"my-model": (1.0, 3.0)}).cost(10**6, 10**6) == pytest.approx(4.0)
    assert price_for("gpt-4o", overrides={"gpt-4o": (1.0, 1.0)}).input_per_m == 1.0
    with pytest.raises(ValueError):
        Price("m", -1.0, 0.0)


def test_table_states_its_date_and_covers_the_common_models():
    assert PRICES_AS_OF
    for model in ("gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "o3", "o4-mini",
                  "o3-mini", "gpt-3.5-turbo"):
        assert model in PRICES and all(p > 0 for p in PRICES[model])
