"""Every committed notebook is its Jupytext source's cells, carries no progress-bar residue, uses the public API.

The ``.ipynb`` files are written from ``notebooks/NN_name.py`` by ``make notebooks``
(``notebooks/_sync.py``); these checks are fast and execute nothing.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"
REPO = NOTEBOOKS.parent


def _load_sync():
    spec = importlib.util.spec_from_file_location("notebooks_sync", NOTEBOOKS / "_sync.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sync = _load_sync()
SOURCES = sync.SOURCES


def test_every_notebook_has_a_source_and_every_source_a_notebook():
    assert len(SOURCES) == 9
    assert {p.stem for p in NOTEBOOKS.glob("*.ipynb")} == {s.stem for s in SOURCES}
    assert not list(NOTEBOOKS.glob("build_*.py"))  # the old builders (code in strings) are gone


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_committed_notebook_is_current_with_its_source(source):
    committed = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    expected = sync.notebook_of(source)
    cells = [(c.cell_type, c.id, c.source) for c in committed.cells]
    assert cells == [(c.cell_type, c.id, c.source) for c in expected.cells], (
        f"{source.with_suffix('.ipynb').name} is not current with {source.name}: run `make notebooks NB={source.stem}`")
    assert committed.metadata["kernelspec"]["name"] == "python3"
    imports = [line for c in committed.cells if c.cell_type == "code" for line in c.source.splitlines()
               if line.startswith(("import lyra_lab", "from lyra_lab"))]
    assert imports and all("._" not in line for line in imports)  # only the public API


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_committed_outputs_hold_no_progress_bars_and_no_local_paths(source):
    committed = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    outputs = [o for c in committed.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not any(sync.WIDGET in o.get("data", {}) for o in outputs)
    streamed = [line for o in outputs if o.output_type == "stream" for line in o.text.splitlines()]
    assert not [line for line in streamed if sync.is_progress(line)]
    assert "widgets" not in committed.metadata
    assert str(REPO) not in source.with_suffix(".ipynb").read_text(encoding="utf-8")


DRAWS = ("matplotlib", "plt.", "plot")  # a source that draws figures


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_committed_notebook_holds_its_small_mode_outputs(source):
    """Browsing the repository shows what the notebook computes: every cell ran, none failed, its figures are inline."""
    committed = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    code = [c for c in committed.cells if c.cell_type == "code"]
    unrun = [c.id for c in code if c.execution_count is None]
    assert not unrun, f"{source.with_suffix('.ipynb').name}: cells {unrun} hold no outputs: run `make notebooks NB={source.stem}`"
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1))  # one run, top to bottom
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    images = [o for c in code for o in c.outputs if "image/png" in o.get("data", {})]
    if any(word in source.read_text(encoding="utf-8") for word in DRAWS):
        assert images, f"{source.with_suffix('.ipynb').name} draws figures but holds none: run `make notebooks NB={source.stem}`"


def test_strip_progress_removes_bars_and_widgets_and_keeps_warnings():
    nb = new_notebook(cells=[new_code_cell("run()")])
    nb.metadata["widgets"] = {"state": {}}
    nb.cells[0].outputs = [
        new_output("display_data", data={sync.WIDGET: {"model_id": "x"}, "text/plain": "  0%|          | 0/8"}),
        new_output("stream", name="stderr", text="cells:   0%|          | 0/8 [00:00<?, ?it/s]\r"
                   "cells: 100%|██████████| 8/8 [00:03<00:00,  2.41it/s]\n"
                   "warning: CIs rest on fewer than 10 probes\n"),
        new_output("stream", name="stderr", text="chunks: 3it [00:00, 21.5it/s]\n"),
        new_output("stream", name="stdout", text="656 tidy rows | 50% of them\n"),
    ]
    assert sync.strip_progress(nb) == 3
    assert "widgets" not in nb.metadata
    assert [(o.name, o.text) for o in nb.cells[0].outputs] == [
        ("stderr", "warning: CIs rest on fewer than 10 probes\n"), ("stdout", "656 tidy rows | 50% of them\n")]


def test_paths_under_the_checkout_are_shown_relative_to_it_and_under_home_from_tilde(tmp_path):
    home, repo = tmp_path, tmp_path / "src" / "lyra-lab"
    nb = new_notebook(cells=[new_code_cell("print(OUT)")])
    nb.cells[0].outputs = [new_output("stream", name="stdout", text=f"results in {repo}/runs/x\n"),
                           new_output("execute_result", data={"text/plain": f"'{repo}/a.csv'"}),
                           new_output("stream", name="stdout", text=f"LoCoMo: {home}/.local/share/l.json\n")]
    sync.relative_paths(nb, repo, home)
    assert nb.cells[0].outputs[0].text == "results in runs/x\n"
    assert nb.cells[0].outputs[1].data["text/plain"] == "'a.csv'"
    assert nb.cells[0].outputs[2].text == "LoCoMo: ~/.local/share/l.json\n"
