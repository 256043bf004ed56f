"""Notebook 04 (property-testing your own strategy) runs headless in small mode, LLM-free.

It must catch both deliberate bugs with a named invariant, shrink them to small
counterexamples, pass the fixed strategies, and run a grid with rows for both chunkers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"


def images(nb) -> int:
    """How many PNG outputs an executed notebook shows."""
    return sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


def test_property_testing_notebook_catches_the_bugs_and_runs_the_grid(tmp_path, run_notebook, monkeypatch):
    monkeypatch.delenv("LYRA_NB_FULL", raising=False)  # small mode, whatever the caller's shell says
    had_hypothesis_dir = (NOTEBOOKS / ".hypothesis").exists()  # the kernel runs in notebooks/
    nb = run_notebook("04_property_testing.ipynb", "LYRA_PROPERTY_TESTING_OUT", needs=("hypothesis", "nbclient"),
                      timeout=600)
    found = json.loads((tmp_path / "property_testing_findings.json").read_text())
    assert found["mode"] == "small"

    # the buggy chunker broke the budget, and the shrunk counterexample is small and really over budget
    assert found["buggy_chunker_invariant"] == "within budget (120 chars)"
    shrunk = found["shrunk"]
    assert 2 <= shrunk["turns"] <= 6 and shrunk["text_chars"] <= 20
    assert max(shrunk["chunk_chars"]) > found["chunk_budget"] and len(shrunk["chunk_chars"]) == 1
    assert shrunk["transcript_chars"] == sum(shrunk["chunk_chars"])  # nothing lost, only the budget broken
    assert found["fixed_chunker_examples"] == 200  # every requested example ran and passed

    # the buggy rollup went over its word budget; the fixed one passed the state machine
    assert "tokens" in found["buggy_rollup_detail"] and f"{found['rollup_budget']}" in found["buggy_rollup_detail"]
    assert 1 <= found["shrunk_rollup_steps"] <= 10
    assert found["fixed_rollup_machines"] >= 100

    # the grid has rows for both chunkers at both sizes, on the same probes
    results = pd.read_parquet(tmp_path / "run" / "results.parquet")
    headline = results[results["metric"] == "answer_in_context@512tok"]
    assert set(headline["chunker"]) == {"sentence_pack", "token_budget"}
    assert headline.groupby("chunker")["cell_id"].nunique().to_dict() == {"sentence_pack": 2, "token_budget": 2}
    per_cell = headline.groupby("cell_id")["probe_id"].apply(frozenset)
    assert per_cell.nunique() == 1 and len(per_cell.iloc[0]) > 0
    assert set(results["backend"]) == {"fake"} and not results["simulated"].any()
    assert (results.loc[results["metric"] == "summarize.calls", "value"] == 0).all()  # no model was called

    table = pd.read_csv(tmp_path / "property_testing_results.csv")
    assert len(table) == 4 and (table["n answer_in_context@512tok"] == len(per_cell.iloc[0])).all()
    paired = pd.DataFrame(found["paired"])
    assert sorted(zip(paired["size_tokens"], paired["metric"])) == [
        (size, metric) for size in (50, 150) for metric in ("answer_in_context@512tok", "evidence_recall@5")]
    assert (paired["ci_low"] <= paired["difference"]).all() and (paired["difference"] <= paired["ci_high"]).all()
    assert images(nb) == 1 and (tmp_path / "property_testing_grid.png").stat().st_size > 10_000

    # the last cell states the outcome from the results
    last = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert "within budget (120 chars)" in last and "200 generated conversations" in last
    assert last.count("the answer is in the 512-token context") == 2
    # hypothesis's caches went to the output folder, not into notebooks/
    assert (tmp_path / ".hypothesis").is_dir() and (had_hypothesis_dir or not (NOTEBOOKS / ".hypothesis").exists())
