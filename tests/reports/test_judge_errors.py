"""Judges' error rates and judge prompts side by side, from hand-made tidy rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lyra_lab.reports import (Proportion, corrected_accuracy, draw_prompt_figure, figure_problems, judge_error_rates,
                              judged_accuracy, prompt_accuracy, prompt_differences, rogan_gladen, wilson_interval)


def test_wilson_interval_matches_the_published_formula():
    # Wilson (1927) / Newcombe (1998) table: 0 of 10 -> [0, 0.2775]; 3 of 10 -> [0.1078, 0.6032]
    assert wilson_interval(0, 10)[1:3] == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson_interval(3, 10)[1:3] == pytest.approx((0.1078, 0.6032), abs=1e-4)
    assert wilson_interval(10, 10)[1:3] == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert np.isnan(wilson_interval(0, 0).rate)


def test_rogan_gladen_inverts_a_judges_error_rates():
    # a true accuracy of 0.4 seen through TPR 0.9 and FPR 0.2 is judged 0.4*0.9 + 0.6*0.2 = 0.48
    assert rogan_gladen(0.48, 0.9, 0.2) == pytest.approx(0.4)
    assert rogan_gladen(0.1, 0.9, 0.2) == 0.0 and rogan_gladen(0.99, 0.9, 0.2) == 1.0  # clipped
    assert np.isnan(rogan_gladen(0.5, 0.3, 0.3))  # a judge no better than a coin says nothing
    c = corrected_accuracy(Proportion(0.48, 0, 0, 500), Proportion(0.9, 0, 0, 400), Proportion(0.2, 0, 0, 800))
    assert c.value == pytest.approx(0.4) and c.low < 0.4 < c.high and c.high - c.low < 0.15


def _rows(pipelines=("p1",), judges=("a", "b"), n=40, seed=0) -> pd.DataFrame:
    """Judge rows for ``n`` probes over 4 conversations, plus controls repeated in two cells."""
    rng = np.random.default_rng(seed)
    rows = []
    for pipeline in pipelines:
        for i in range(n):
            base = {"pipeline": pipeline, "cell_id": f"{pipeline}-c{i % 4}", "conversation_id": f"c{i % 4}",
                    "probe_id": f"q{i}"}
            for j, judge in enumerate(judges):
                rows.append({**base, "metric": "judge", "judge": judge, "judge_prompt": f"prompt_{judge}",
                             "value": float(rng.random() < 0.3 + 0.3 * j)})
                rows.append({**base, "metric": "judge_tpr", "judge": judge, "judge_control": "gold",
                             "value": float(i % 10 != 0)})  # TPR 0.9
                rows.append({**base, "metric": "judge_fpr", "judge": judge, "judge_control": "negated",
                             "value": float(i % 5 == 0)})  # FPR 0.2
    return pd.DataFrame(rows)


def test_error_rates_count_each_control_once_and_never_touch_j():
    df = _rows(pipelines=("p1", "p2"))  # the same controls graded in both pipelines' cells
    rates = judge_error_rates(df).set_index("judge")
    assert rates.loc["a", "tpr_n"] == rates.loc["a", "fpr_n"] == 40  # not 80: one control, one count
    assert rates.loc["a", "tpr"] == pytest.approx(0.9) and rates.loc["a", "fpr"] == pytest.approx(0.2)
    table = judged_accuracy(df).set_index(["pipeline", "judge"])
    judged = df[df["metric"] == "judge"].groupby(["pipeline", "judge"])["value"].mean()
    assert table["j"].to_dict() == pytest.approx(judged.to_dict())
    assert table["n"].eq(40).all() and table["corrected_j"].isna().all()  # corrected only when asked
    asked = df.assign(**{"judge.corrected": df["judge"] == "a"})
    corrected = judged_accuracy(asked).set_index(["pipeline", "judge"])["corrected_j"]
    assert corrected.loc[("p1", "a")] == pytest.approx(rogan_gladen(judged[("p1", "a")], 0.9, 0.2))
    assert corrected.loc[("p1", "b")] != corrected.loc[("p1", "b")]  # NaN: b did not ask


def test_prompt_differences_are_paired_and_the_figure_reads(tmp_path):
    df = _rows(pipelines=("p1", "p2", "p3"), judges=("own", "lenient", "strict"), n=60)
    accuracy = prompt_accuracy(df)
    assert set(accuracy["pipeline"]) == {"p1", "p2", "p3", "all pipelines"}
    diffs = prompt_differences(df)
    assert set(diffs["reference"]) == {"lenient"}  # none uses lyra-lab's default prompt: the first judge
    wide = df[df["metric"] == "judge"].pivot_table(index=["pipeline", "probe_id"], columns="judge", values="value")
    overall = diffs[diffs["pipeline"] == "all pipelines"].set_index("judge")
    assert overall.loc["own", "diff"] == pytest.approx((wide["own"] - wide["lenient"]).mean())
    assert overall.loc["own", "low"] < overall.loc["own", "diff"] < overall.loc["own", "high"]
    fig = draw_prompt_figure(accuracy, diffs)
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 4  # three pipelines and the differences
    assert figure_problems(fig) == []
