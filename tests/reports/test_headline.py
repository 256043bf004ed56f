"""The line report.html opens on: the lead metric's best pipelines with CI and n, ties and degraded marks said."""

from __future__ import annotations

import pandas as pd

from lyra_lab.reports._degraded import DegradedPipeline
from lyra_lab.reports._headline import headline


def summary(means: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame([{"pipeline": p, "backend": "fake", "m": v, "m_ci_low": v - 0.1, "m_ci_high": v + 0.1,
                          "m_n": 12} for p, v in means.items()])


def test_the_best_three_by_mean_with_ci_and_n():
    line = headline(summary({"a|bm25": 0.2, "b|dense": 0.9, "c|bm25": 0.5, "d|dense": 0.7}), "m", ["pipeline"])
    assert [r.label for r in line.rows] == ["b|dense", "d|dense", "c|bm25"]
    assert line.rows[0].text() == "b|dense: 0.900 [0.800, 1.000], n = 12"
    assert line.caption() == "m, best 3 of 4 pipelines (mean over probes [95% CI], n probes)"
    assert "<li>d|dense: 0.700 [0.600, 0.800], n = 12</li>" in line.html()


def test_ties_and_degraded_pipelines_are_said():
    marked = {"b|dense": DegradedPipeline("b|dense", total=3, cells=1, of=1)}
    line = headline(summary({"a|bm25": 1.0, "b|dense": 1.0, "c|bm25": 1.0, "d|dense": 1.0}), "m", ["pipeline"],
                    marked)
    assert line.caption().startswith("m, 4 pipelines tie at the best; 3 of them")
    assert line.rows[1].text() == "b|dense ⚠ degraded (3): 1.000 [0.900, 1.100], n = 12"


def test_no_headline_without_the_metric_and_its_interval():
    frame = summary({"a": 0.5})
    assert headline(frame, None, ["pipeline"]) is None
    assert headline(frame.drop(columns="m_ci_low"), "m", ["pipeline"]) is None
    assert headline(frame.assign(m=float("nan")), "m", ["pipeline"]) is None
