"""The paired table's verdict in words agrees with its numbers (difference, CI, p before and after Holm)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lyra_lab.reports._compare_report import NO_DIFFERENCE, TOO_FEW, WORSE, _cells, verdict
from lyra_lab.stats import compare_all


def row(difference, ci, p, p_holm, not_worse=True):
    return pd.Series({"difference": difference, "ci_low": ci[0], "ci_high": ci[1], "p_value": p,
                      "p_holm": p_holm, "not_worse_than_best": not_worse})


@pytest.mark.parametrize(("case", "comparisons", "expected"), [
    # the row: −1.000, CI [−1.000, −1.000], Holm p 0.359 was "✓ not worse than best"
    (row(-1.0, (-1.0, -1.0), 0.0156, 0.359), 23, "not shown worse (n too small for 23 comparisons: p 0.0156 "
                                                  "before Holm)"),
    (row(-1.0, (-1.0, -1.0), 0.25, 0.25), 1, TOO_FEW),  # too few units for the test itself
    (row(-0.5, (-0.9, -0.1), 0.01, 0.02, not_worse=False), 2, WORSE),
    (row(-0.2, (-0.6, 0.1), 0.3, 0.6), 2, NO_DIFFERENCE),  # the CI holds 0: nothing to explain
    (row(-0.2, (-0.6, 0.1), 0.01, 0.06), 6, NO_DIFFERENCE),  # significant alone, but the CI holds 0
    (row(0.0, (np.nan, np.nan), 1.0, 1.0), 1, NO_DIFFERENCE),  # one cluster: no interval
    (row(np.nan, (np.nan, np.nan), np.nan, np.nan, not_worse=pd.NA), 1, "? not tested"),
])
def test_verdict_by_hand(case, comparisons, expected):
    assert verdict(case, 0.05, comparisons) == expected


def frame(values: dict[str, list[float]]) -> pd.DataFrame:
    """One probe per conversation, the i-th value of each pipeline on probe i."""
    return pd.DataFrame([{"pipeline": p, "backend": "fake", "embedder": "hashing", "seed": 0,
                          "conversation_id": f"c{i}", "probe_id": f"q{i}", "metric": "m", "value": v}
                         for p, vs in values.items() for i, v in enumerate(vs)])


def test_table_words_follow_the_test_on_built_runs():
    """Seven conversations, best A = 1 on each; B = 0 on each: difference −1, every bootstrap CI [−1, −1].

    B's exact sign-flip p = 2/2^7 = 0.0156.  With three more pipelines equal to A (difference 0, p 1),
    Holm multiplies B's p by 4: 0.0625 ≥ 0.05, so B is not shown worse though its CI excludes 0; with
    B alone against A, 0.0156 < 0.05: worse.
    """
    best, worse = [1.0] * 7, [0.0] * 7
    table = compare_all(frame({"A": best, "B": worse, "C": best, "D": best, "E": best}), "m", n_boot=200)
    cells = {r[0]: r for r in _cells(table)}
    assert cells["B"][1:4] == ["-1.000", "[-1.000, -1.000]", "0.0625"]
    assert cells["B"][4] == "not shown worse (n too small for 4 comparisons: p 0.0156 before Holm)"
    assert cells["C"][4] == NO_DIFFERENCE and cells["A"][4] == "best"
    alone = {r[0]: r for r in _cells(compare_all(frame({"A": best, "B": worse}), "m", n_boot=200))}
    assert alone["B"][3:5] == ["0.0156", WORSE]
    three = {r[0]: r for r in _cells(compare_all(frame({"A": best[:3], "B": worse[:3]}), "m", n_boot=200))}
    assert three["B"][2:5] == ["[-1.000, -1.000]", "0.25", TOO_FEW]  # 2/2^3: no test could reach 0.05
