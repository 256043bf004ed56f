"""Every committed notebook is output-free, matches the script that builds it, and uses only the public API."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"
BUILT_BY = {"01_quickstart.ipynb": "build_quickstart.py", "02_backends.ipynb": "build_backends.py",
            "03_probe_review.ipynb": "build_probe_review.py",
            "04_property_testing.ipynb": "build_property_testing.py",
            "05_chunk_budget_tuning.ipynb": "build_chunk_tuning.py",
            "06_recall_locomo.ipynb": "build_recall_locomo.py",
            "07_local_vs_cloud.ipynb": "build_local_vs_cloud.py",
            "08_rollups_budget.ipynb": "build_rollups_budget.py"}


def test_every_notebook_has_a_builder():
    assert {p.name for p in NOTEBOOKS.glob("*.ipynb")} == set(BUILT_BY)


@pytest.mark.parametrize("notebook, builder_file", sorted(BUILT_BY.items()))
def test_committed_notebook_has_no_outputs_and_matches_its_builder(notebook, builder_file):
    spec = importlib.util.spec_from_file_location(Path(builder_file).stem, NOTEBOOKS / builder_file)
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    committed = nbformat.read(NOTEBOOKS / notebook, as_version=4)
    assert all(not c.get("outputs") and c.get("execution_count") is None
               for c in committed.cells if c.cell_type == "code")
    assert [c.source for c in committed.cells] == [c.source for c in builder.build().cells]
    imports = [line for c in committed.cells if c.cell_type == "code" for line in c.source.splitlines()
               if line.startswith(("import lyra_lab", "from lyra_lab"))]
    assert imports and all("._" not in line for line in imports)  # only the public API
