"""What ``lyra-lab demo`` ends on: the headline, then the paired comparisons' verdicts in the report's words."""

from __future__ import annotations

import pandas as pd

from lyra_lab.commands.demo import headline_lines
from lyra_lab.reports._headline import Headline, HeadlineRow


def _paired(p_holm: float) -> pd.DataFrame:
    return pd.DataFrame({
        "pipeline": ["a|dense", "a|bm25", "b|dense"], "best": "a|dense", "metric": "answer_in_context@512tok",
        "mean": [0.86, 0.72, 0.42], "difference": [0.0, -0.14, -0.44], "ci_low": [None, -0.19, -0.53],
        "ci_high": [None, -0.09, -0.36], "p_value": [None, 0.016, 0.008], "p_holm": [None, p_holm, 0.016],
        "not_worse_than_best": [True, p_holm >= 0.05, False], "n_probes": 64, "n_clusters": 8})


def test_the_demo_ends_on_its_headline_and_the_held_differences():
    head = Headline("answer_in_context@512tok", (HeadlineRow("a|dense", 0.859, 0.781, 0.938, 64),), 3)
    lines = headline_lines(head, _paired(0.016))
    text = " ".join(" ".join(lines).split())
    assert "1. a|dense: 0.859 [0.781, 0.938], n = 64" in text
    assert ("paired with the best by answer_in_context@512tok on 64 probes (8 conversations resampled; Holm over 2 "
            "comparisons, α = 0.05): ✗ worse (2)") in text  # the metric named: the headline's may be another
    assert all(len(line) <= 100 for line in lines)


def test_a_difference_the_correction_does_not_hold_is_not_called_worse():
    text = " ".join(headline_lines(None, _paired(0.09)))
    assert "✗ worse (1)" in text and "not shown worse (n too small for 2 comparisons: p 0.016 before Holm) (1)" in text
