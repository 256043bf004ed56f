"""Notebook 09 without LoCoMo: one line says so and the export part runs.

Its own file, so that under ``--dist loadfile`` it runs on another worker than the small mode's
LoCoMo test (``test_external_systems_notebook.py``), the suite's longest file.
"""

from __future__ import annotations

import pandas as pd
import pytest

from lyra_lab import datasets
from tests.notebooks.test_external_systems_notebook import NEEDS, PIPELINES, outputs, small_mode  # noqa: F401

pytestmark = pytest.mark.usefixtures("small_mode")  # LYRA_NB_FULL and LYRA_NB_EMBEDDER unset


def test_without_locomo_the_notebook_says_so_and_runs_the_export(tmp_path, monkeypatch, run_notebook):
    monkeypatch.setenv("LYRA_LOCOMO", str(tmp_path / "no-such-locomo10.json"))
    monkeypatch.setenv("LYRA_NB_EMBEDDER", "hashing")  # the tables' shape only: the stand-in embedder is enough
    nb = run_notebook("09_external_systems.ipynb", "LYRA_EXTERNAL_SYSTEMS_OUT", needs=NEEDS, timeout=900)
    text = "".join(o.get("text", "") for o in outputs(nb))
    assert datasets.missing_message("locomo") in text and "The LoCoMo part is skipped" in text
    curves = pd.read_csv(tmp_path / "quality_at_budget.csv")
    assert set(curves["corpus"]) == {"planted export"} and set(curves["pipeline"]) == PIPELINES
