"""What a call costs: USD per million input and output tokens, per model.

Prices are the providers' published standard-tier list prices (no batch,
cached-input or priority discounts) as of **2025-08** (openai.com/api/pricing,
anthropic.com/pricing). They go stale: check them before quoting a dollar
figure, and pass ``overrides`` (or ``BackendConfig.price_in_per_m`` /
``price_out_per_m``) for your own contract prices. Local and unknown models
cost 0; an unknown model is flagged (``Price.known`` is false) so a report can
say its cost is not a real figure.

>>> price_for("gpt-4o-mini-2024-07-18").input_per_m
0.15
>>> round(price_for("gpt-4o").cost(1_000, 500), 6)
0.0075
>>> price_for("smollm2-135m").known
False
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

PRICES_AS_OF = "2025-08"

# model → (USD per 1M input tokens, USD per 1M output tokens)
PRICES: Mapping[str, tuple[float, float]] = {
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "o1": (15.00, 60.00),
    "o1-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-4": (30.00, 60.00),
    "gpt-3.5-turbo": (0.50, 1.50),
    "claude-opus-4": (15.00, 75.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-3-5-haiku": (0.80, 4.00),
}

# A dated snapshot ("gpt-4o-2024-08-06", "claude-sonnet-4-20250514") or a
# "-latest" alias costs what its family costs.
_SNAPSHOT = re.compile(r"^-(\d{4}-?\d{2}-?\d{2}|\d{4}|latest|preview)$")


@dataclass(frozen=True)
class Price:
    """USD per million tokens of one model, and whether the table knew it.

    Attributes:
        model: the model asked about.
        input_per_m: USD per 1M prompt tokens.
        output_per_m: USD per 1M completion tokens.
        known: false when the model is not in the table (cost counted as 0).
    """

    model: str
    input_per_m: float
    output_per_m: float
    known: bool = True

    def __post_init__(self) -> None:
        if self.input_per_m < 0 or self.output_per_m < 0:
            raise ValueError(f"price of {self.model!r} must not be negative")

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """USD for a call of this many prompt and completion tokens."""
        return (prompt_tokens * self.input_per_m + completion_tokens * self.output_per_m) / 1_000_000


def price_for(model: str, overrides: Mapping[str, tuple[float, float]] | None = None) -> Price:
    """The price of ``model`` ("gpt-4o", "openai/gpt-4o-2024-08-06"…).

    Args:
        model: a model name; a provider prefix ("openai/") and a dated snapshot
            suffix are ignored.
        overrides: model → (input, output) USD per 1M tokens, looked up first.

    Returns:
        A ``Price``; unknown models cost 0 with ``known=False``.
    """
    table = {**PRICES, **(overrides or {})}
    name = model.split("/")[-1].lower()
    if name in table:
        return Price(model, *table[name])
    # Longest family name that the model extends by a snapshot suffix only.
    for family in sorted(table, key=len, reverse=True):
        if name.startswith(family) and _SNAPSHOT.match(name[len(family):]):
            return Price(model, *table[family])
    return Price(model, 0.0, 0.0, known=False)
