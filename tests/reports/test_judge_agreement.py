"""Judge variance: Cohen's kappa by hand, agreement between judges and with exact match, J per pipeline per judge."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from lyra_lab.reports import cohen_kappa, judge_agreement, judge_table

A = [1, 1, 0, 0, 1, 0]
B = [1, 0, 0, 0, 1, 1]
EM = [1, 1, 0, 0, 0, 0]


def tidy(judges: dict[str, list[int]], em: list[int]) -> pd.DataFrame:
    """Six answers: probes p0-p2 under pipeline P1, p3-p5 under P2; one judge row per judge, one qa_em row."""
    rows = []
    for i in range(len(em)):
        base = {"cell_id": f"c{i // 3}", "pipeline": f"P{i // 3 + 1}", "conversation_id": "u0",
                "probe_id": f"p{i}", "category": ""}
        rows.append({**base, "metric": "qa_em", "value": float(em[i])})
        rows.append({**base, "metric": "qa_f1", "value": 0.5})
        rows += [{**base, "metric": "judge", "value": float(v[i]), "judge": name} for name, v in judges.items()]
    return pd.DataFrame(rows)


def test_kappa_matches_the_textbook_example():
    # 50 items: both yes 20, A yes B no 5, A no B yes 10, both no 15 -> p_o 0.7, p_e 0.5, kappa 0.4
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(a, a) == pytest.approx(1.0)
    assert cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == pytest.approx(-1.0)


def test_kappa_is_undefined_when_both_raters_never_vary():
    assert math.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))
    assert cohen_kappa([1, 1, 1, 1], [1, 1, 0, 0]) == pytest.approx(0.0)  # one constant rater: no better than chance
    with pytest.raises(ValueError, match="equally long"):
        cohen_kappa([1, 0], [1])


def test_agreement_table_pairs_every_judge_with_each_other_and_with_exact_match():
    table = judge_agreement(tidy({"a": A, "b": B}, EM)).set_index(["rater", "other"])
    assert list(table.index) == [("a", "b"), ("a", "exact_match"), ("b", "exact_match")]
    assert (table["n"] == 6).all()
    # a vs b: agree on 4 of 6; each rates 1 half the time -> p_e 0.5 -> kappa (2/3 - 1/2) / (1/2) = 1/3
    assert table.loc[("a", "b"), "agreement"] == pytest.approx(4 / 6)
    assert table.loc[("a", "b"), "kappa"] == pytest.approx(1 / 3)
    # a vs EM: agree on 5 of 6; p_e = .5 * 1/3 + .5 * 2/3 = .5 -> kappa 2/3
    assert table.loc[("a", "exact_match"), "kappa"] == pytest.approx(2 / 3)
    # b vs EM: agree on 3 of 6 = chance -> kappa 0
    assert table.loc[("b", "exact_match"), "agreement"] == pytest.approx(0.5)
    assert table.loc[("b", "exact_match"), "kappa"] == pytest.approx(0.0)
    assert table.loc[("a", "b"), "rater_mean"] == pytest.approx(0.5)
    assert table.loc[("a", "exact_match"), "other_mean"] == pytest.approx(2 / 6)


def test_answers_only_one_judge_graded_are_left_out_of_that_pair():
    df = tidy({"a": A, "b": B}, EM)
    df = df[~((df["judge"] == "b") & (df["probe_id"] == "p5"))]  # b never graded p5
    table = judge_agreement(df).set_index(["rater", "other"])
    assert table.loc[("a", "b"), "n"] == 5 and table.loc[("a", "exact_match"), "n"] == 6
    # a vs b on p0-p4: a=[1,1,0,0,1], b=[1,0,0,0,1]: agree 4/5; p_e = .6*.4 + .4*.6 = .48
    assert table.loc[("a", "b"), "kappa"] == pytest.approx((0.8 - 0.48) / (1 - 0.48))


def test_judge_table_shows_the_winner_depends_on_the_judge():
    table = judge_table(tidy({"a": A, "b": B}, EM)).set_index("pipeline")
    assert table.loc["P1", "a"] == pytest.approx(2 / 3) and table.loc["P2", "a"] == pytest.approx(1 / 3)
    assert table.loc["P1", "b"] == pytest.approx(1 / 3) and table.loc["P2", "b"] == pytest.approx(2 / 3)
    assert table.loc["P1", "exact_match"] == pytest.approx(2 / 3) and table.loc["P2", "exact_match"] == 0
    assert table["spread"].tolist() == pytest.approx([1 / 3, 1 / 3])
    assert table["rank:a"].tolist() == [1, 2] and table["rank:b"].tolist() == [2, 1]
    assert table["n"].tolist() == [3, 3]


def test_rows_without_a_judge_column_count_as_one_judge_and_no_judge_rows_fail_clearly():
    old = tidy({"x": A}, EM).drop(columns="judge")
    table = judge_agreement(old)
    assert table[["rater", "other"]].values.tolist() == [["judge", "exact_match"]]
    with pytest.raises(ValueError, match="no judge rows"):
        judge_agreement(old[old["metric"] != "judge"])


def test_doctests():
    import doctest

    from lyra_lab.reports import _agreement

    assert doctest.testmod(_agreement).failed == 0


def test_split_judges_gives_each_judge_its_own_metric_only_when_there_are_several():
    from lyra_lab.reports import split_judges

    two = split_judges(tidy({"a": A, "b": B}, EM))
    assert sorted(set(two["metric"])) == ["judge[a]", "judge[b]", "qa_em", "qa_f1"]
    assert two[two["metric"] == "judge[a]"]["value"].tolist() == A
    one = tidy({"a": A}, EM)
    assert split_judges(one) is one
