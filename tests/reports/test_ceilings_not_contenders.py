"""A ceiling (oracle, full_context) bounds the strategies; the headline and the paired comparisons leave it out.

The demo with its ceilings reported ``raw=yes|oracle`` as the best pipeline and ran Holm over nine
comparisons, so with 8 conversations no strategy could ever be shown worse.  These tests fail on that code.
"""

from __future__ import annotations

import pandas as pd

from lyra_lab.reports._compare_report import WORSE, paired_section
from lyra_lab.reports._contenders import ceiling_pipelines, ceilings_apart, contenders
from lyra_lab.reports._headline import headline


def rows(values: dict[str, list[float]]) -> pd.DataFrame:
    """One probe per conversation; the pipeline's recaller is the part after its last ``|``."""
    return pd.DataFrame([{"pipeline": p, "recaller": p.rsplit("|", 1)[-1], "backend": "fake", "embedder": "hashing",
                          "seed": 0, "conversation_id": f"c{i}", "probe_id": f"q{i}", "metric": "m", "value": v}
                         for p, vs in values.items() for i, v in enumerate(vs)])


def test_the_ceilings_are_told_apart_by_their_recaller():
    df = rows({"m|bm25": [0.0], "m|oracle": [1.0], "m|full_context": [1.0], "m|dense": [0.5]})
    assert ceiling_pipelines(df) == {"m|oracle", "m|full_context"}
    assert sorted(ceilings_apart(df)) == ["full_context", "oracle"]
    assert set(contenders(df)["pipeline"]) == {"m|bm25", "m|dense"}
    assert ceiling_pipelines(df.drop(columns="recaller")) == frozenset()


def test_paired_comparisons_rank_and_test_the_strategies_alone(tmp_path):
    """Seven conversations: the oracle is 1 on each, dense 0.9, bm25 0; with the oracle out, dense is the best.

    bm25 against dense alone: exact sign-flip p = 2/2^7 = 0.0156 < 0.05, worse.  With the two ceilings
    in the family Holm would multiply it by 3 (0.047, just under) and the best would be the oracle.
    """
    df = rows({"m|oracle": [1.0] * 7, "m|full_context": [1.0] * 7, "m|dense": [0.9] * 7, "m|bm25": [0.0] * 7})
    section = paired_section(df, "m", tmp_path, cluster="conversation_id", n_resamples=200, seed=0)
    assert section.table is not None
    assert set(section.table["pipeline"]) == {"m|dense", "m|bm25"}
    assert set(section.table["best"]) == {"m|dense"}
    cells = {r[0]: r for r in section.body}
    assert cells["m|bm25"][3:5] == ["0.0156", WORSE]
    note = next(n for n in section.notes if "are not compared here" in n)
    assert "oracle" in note and "full_context" in note


def test_the_headline_leaves_the_ceilings_out_and_says_so():
    summary = pd.DataFrame([{"pipeline": p, "m": v, "m_ci_low": v - 0.1, "m_ci_high": v + 0.1, "m_n": 8}
                            for p, v in {"m|oracle": 1.0, "m|dense": 0.6, "m|bm25": 0.4}.items()])
    line = headline(summary, "m", ["pipeline"], ceilings={"m|oracle"})
    assert line is not None
    assert [r.label for r in line.rows] == ["m|dense", "m|bm25"]
    assert line.caption() == "m, best 2 of 2 pipelines, 1 ceiling apart (mean over probes [95% CI], n probes)"
    plain = headline(summary, "m", ["pipeline"])
    assert plain is not None and plain.rows[0].label == "m|oracle"  # without the run's rows: no ceiling known
