"""How a report finds and marks degraded pipelines, from the rows' ``degraded`` column and metrics and the
run log's ``call_attempts`` events (the end-to-end check is tests/experiments/test_degraded_cell.py)."""

from __future__ import annotations

import pandas as pd

from lyra_lab.backends import AttemptTally
from lyra_lab.reports._degraded import (attempts_line, compare_warning, degraded_pipelines, relabel, _tally)


def rows() -> pd.DataFrame:
    """Two pipelines × two cells; one cell of ``a|bm25`` degraded twice (a chunk excerpt, a failed answer)."""
    out = []
    for pipeline, cell, degraded in (("a|bm25", "c1", 2), ("a|bm25", "c2", 0), ("b|bm25", "c3", 0), ("b|bm25", "c4", 0)):
        base = {"pipeline": pipeline, "cell_id": cell, "degraded": degraded}
        out += [{**base, "probe_id": "p1", "metric": "mrr", "value": 0.5},
                {**base, "probe_id": "p2", "metric": "mrr", "value": 1.0}]
        if degraded:
            out += [{**base, "probe_id": "", "metric": "degraded.summarize.chunk_excerpt", "value": 1.0},
                    {**base, "probe_id": "", "metric": "degraded.answer.failed", "value": 1.0}]
    return pd.DataFrame(out)


def test_degraded_pipelines_count_cells_and_kinds_and_mark_the_memory_part_of_the_label():
    found = degraded_pipelines(rows())
    assert list(found) == ["a|bm25"]
    a = found["a|bm25"]
    assert (a.total, a.cells, a.of) == (2, 1, 2)
    assert dict(a.kinds) == {"degraded.answer.failed": 1, "degraded.summarize.chunk_excerpt": 1}
    assert a.label() == "a ⚠ degraded (2)|bm25"  # figures split memory|recaller: the mark stays with the memory
    assert set(relabel(rows(), found)["pipeline"]) == {"a ⚠ degraded (2)|bm25", "b|bm25"}
    assert degraded_pipelines(rows().assign(degraded=0)) == {}
    assert degraded_pipelines(rows().drop(columns="degraded")) == {}  # rows from before it was counted


def test_compare_warns_in_one_line_naming_only_the_degraded_side():
    line = compare_warning({"A": degraded_pipelines(rows()), "B": {}})
    assert line is not None and "\n" not in line
    assert line.startswith("⚠ degraded: A: a|bm25 (1 of 2 cell(s), 2 fallback(s) or failed call(s))") and "B:" not in line
    assert compare_warning({"A": {}, "B": {}}) is None


def test_the_attempts_tally_is_each_cells_latest_and_reads_back_from_its_metrics():
    tally = AttemptTally.of(answered=[1, 1, 2, 0], failed=["attempts"])
    assert _tally(tally.metrics()) == tally
    events = [{"event": "call_attempts", "cell_id": "c1", "phases": {"summarize": {"calls.attempts_1": 9}}},
              {"event": "call_attempts", "cell_id": "c1", "phases": {"summarize": tally.metrics()}},  # resumed
              {"event": "call_attempts", "cell_id": "c2", "phases": {"answer": {"calls.attempts_3": 1}}}]
    assert attempts_line(events) == ("LLM calls of the 2 cell(s) run: 6 calls: 2 answered at attempt 1, 1 at "
                                     "attempt 2, 1 at attempt 3, 1 from the response cache; 1 failed (attempts 1).")
    assert attempts_line([]) is None
