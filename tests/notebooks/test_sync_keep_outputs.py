"""``_sync.py --keep-outputs``: a comment or docstring edit keeps a cell's outputs; any other edit drops them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from nbformat.v4 import new_code_cell, new_notebook, new_output

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"


def _load_sync():
    spec = importlib.util.spec_from_file_location("notebooks_sync", NOTEBOOKS / "_sync.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sync = _load_sync()

BEFORE = "%matplotlib inline\ndef f(x):\n    # doubled\n    return 2 * x\n\nprint(f(2))\n"


def test_comments_docstrings_and_magics_do_not_change_the_key():
    edited = '%matplotlib inline\ndef f(x):\n    """Twice ``x``."""\n    return 2 * x  # doubled\n\nprint(f(2))\n'
    assert sync.code_key(edited) == sync.code_key(BEFORE)


def test_code_and_magic_edits_change_the_key():
    assert sync.code_key(BEFORE.replace("2 * x", "3 * x")) != sync.code_key(BEFORE)
    assert sync.code_key(BEFORE.replace("inline", "widget")) != sync.code_key(BEFORE)
    assert sync.code_key('def f():\n    """only a docstring"""\n') != sync.code_key("def f():\n    return 1\n")


def _notebook(*sources: str, run: bool):
    cells = [new_code_cell(s, id=f"nb-{i:02d}") for i, s in enumerate(sources)]
    if run:
        for n, cell in enumerate(cells, start=1):
            cell.execution_count, cell.outputs = n, [new_output("stream", name="stdout", text=f"out {n}\n")]
    nb = new_notebook(cells=cells)
    nb.metadata = {"kernelspec": {"name": "python3"}, "language_info": {"name": "python", "version": "3.11"}}
    return nb


def test_keep_outputs_keeps_unchanged_cells_only():
    old = _notebook(BEFORE, "x = 1\n", run=True)
    new = _notebook(BEFORE.replace("# doubled", "# twice"), "x = 2\n", run=False)
    new.metadata = {}
    assert sync.keep_outputs(new, old) == (1, 2)
    assert new.cells[0].outputs[0].text == "out 1\n" and new.cells[0].execution_count == 1
    assert new.cells[1].outputs == [] and new.cells[1].execution_count is None
    assert "version" not in new.metadata.get("language_info", {})  # not every cell kept: not the old run's metadata


def test_keep_outputs_takes_the_runs_metadata_when_every_cell_kept_its_outputs():
    old = _notebook(BEFORE, run=True)
    new = _notebook(BEFORE.replace("# doubled", ""), run=False)
    new.metadata = {}
    assert sync.keep_outputs(new, old) == (1, 1)
    assert new.metadata["language_info"]["version"] == "3.11"
