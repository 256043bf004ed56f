"""Views of a tidy results frame by measure: its metric names parsed once into ``Measure`` values."""

from __future__ import annotations

import pandas as pd

from lyra_lab.measures import Measure


def budget_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The ``@Btok`` rows of a results frame with ``metric_base`` and a numeric ``budget_tokens`` column.

    >>> budget_frame(pd.DataFrame({"metric": ["mrr", "answer_in_context@256tok"], "value": [1.0, 0.0]}))
                         metric  value         metric_base  budget_tokens
    1  answer_in_context@256tok    0.0  answer_in_context            256
    """
    parsed = {name: Measure.parse(name) for name in df["metric"].astype(str).unique()}
    budgets = {name: m for name, m in parsed.items() if m.unit == "tok"}
    out = df[df["metric"].astype(str).isin(budgets)].copy()
    out["metric_base"] = out["metric"].map(lambda name: budgets[name].base)
    out["budget_tokens"] = out["metric"].map(lambda name: budgets[name].cutoff).astype(int)
    return out
