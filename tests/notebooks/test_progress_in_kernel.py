"""Progress bars reach a Jupyter front end as widgets, not as nothing.

tqdm hides a bar when its output is not a terminal; in a kernel the bar must come out
as an ipywidgets display (what JupyterLab draws as a progress bar).  This runs a tiny
LLM-free grid in a real kernel and looks at what the cell displayed.
"""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import nbformat
import pytest

DATASET = Path(__file__).parents[2] / "datasets" / "synthetic_small.jsonl"
WIDGET = "application/vnd.jupyter.widget-view+json"


def _execute(source: str) -> list[dict]:
    if importlib.util.find_spec("ipywidgets") is None:
        pytest.skip("needs ipywidgets (pip install 'lyra-lab[notebooks]')")
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source)]
    NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    return list(nb.cells[0].outputs)


def test_a_grid_run_in_a_kernel_displays_its_progress_as_widgets(tmp_path):
    experiment = tmp_path / "tiny.toml"
    experiment.write_text(textwrap.dedent(f"""
        name = "tiny"
        [corpus]
        path = "{DATASET}"
        conversations = 1
        max_sessions = 2
        [grid]
        chunkers = [{{ name = "turn_window", max_turns = 4 }}]
        recallers = ["bm25"]
        [run]
        embedders = ["none"]
        ks = [5]
        cache = "off"
    """), encoding="utf-8")
    outputs = _execute(textwrap.dedent(f"""
        from lyra_lab.experiments import run_experiment
        rows = run_experiment({str(experiment)!r}, run_dir={str(tmp_path / 'run')!r})
        print("rows", len(rows))
    """))
    widgets = [o for o in outputs if o.get("output_type") == "display_data" and WIDGET in o.get("data", {})]
    printed = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "rows " in printed and int(printed.split("rows ")[1].split()[0]) > 0
    assert widgets, f"no progress widget among {[o.get('output_type') for o in outputs]}"
    # the bar is a widget, not a text bar written into stderr
    assert "cells:" not in "".join(o.get("text", "") for o in outputs if o.get("name") == "stderr")
