"""recall-eval's CLI: category checks, category labels, cluster-bootstrap CIs and per-probe JSON rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lyra_lab.cli import main
from lyra_lab.corpus import load

ROOT = Path(__file__).resolve().parents[2]
LOCOMO_MINI = ROOT / "tests" / "fixtures" / "corpus" / "locomo_mini.json"
SYNTHETIC = ROOT / "datasets" / "synthetic_small.jsonl"
BM25 = ["--recaller", "bm25", "--embedder", "none"]


def _json(capsys, *argv: str) -> dict:
    assert main(["recall-eval", *argv, *BM25, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_unknown_category_is_rejected_listing_the_known_ones(capsys):
    assert main(["recall-eval", str(LOCOMO_MINI), *BM25, "--categories", "2,9"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--categories 9" in err and "has categories 1, 2, 4, 5" in err


def test_json_keeps_its_keys_and_adds_cis_and_probe_rows(capsys):
    out = _json(capsys, str(SYNTHETIC), "--k", "5")
    k = "evidence_recall@5"
    for key in ("n_probes", k, "mrr", "ndcg@5", "recall_latency_p50_s", "recall_latency_p95_s", "recaller",
                "embedder", "k", "skipped", "by_category"):
        assert key in out
    probes = out["probes"]
    assert len(probes) == out["n_probes"] > 10
    assert set(probes[0]) == {"probe_id", "conversation_id", "category", k, "mrr", "ndcg@5", "retrieved",
                              "latency_s"}
    assert out[k] == pytest.approx(sum(p[k] for p in probes) / len(probes))
    assert all(len(p["retrieved"]) <= 5 and all(isinstance(t, str) for g in p["retrieved"] for t in g)
               for p in probes)
    corpus = load(SYNTHETIC)
    assert {p["conversation_id"] for p in probes} == {c.id for c in corpus.conversations}
    for name in (k, "mrr", "ndcg@5"):
        low, high = out["ci95"][name]
        assert low <= out[name] <= high
    assert set(out["ci95_by_category"]) == set(out["by_category"])
    assert "cluster bootstrap" in out["ci_method"]


def test_cis_resample_conversations():
    from lyra_lab.experiments import ProbeRecall, RecallEvalResult
    from lyra_lab.stats import cluster_bootstrap_ci

    per = tuple(ProbeRecall(f"p{i}", f"c{i % 3}", "1", float(i % 2), 0.5, 0.25) for i in range(12))
    result = RecallEvalResult("x", None, 10, 12, 0.5, 0.5, 0.25, per_probe=per)
    cis = result.cis(200, seed=1)
    assert cis["evidence_recall@10"] == cluster_bootstrap_ci([p.recall for p in per], [p.conversation_id for p in per],
                                                    200, seed=1)
    assert cis["mrr"].low == cis["mrr"].high == 0.5


def test_category_labels_name_the_rows(capsys):
    argv = ["recall-eval", str(LOCOMO_MINI), *BM25, "--include-adversarial"]
    assert main([*argv, "--category-labels", "mem0"]) == 0
    mem0 = capsys.readouterr().out
    assert "2 temporal" in mem0 and "4 open-domain" in mem0 and "5 adversarial" in mem0
    assert main([*argv, "--category-labels", "locomo_paper"]) == 0
    assert "4 single-hop" in capsys.readouterr().out
    assert main(argv) == 0  # a LoCoMo corpus: named as `report --table locomo` names them, by the release
    plain = capsys.readouterr().out
    assert "4 single-hop" in plain and "5 adversarial" in plain and "[95% CI]" in plain
    assert main(["recall-eval", str(SYNTHETIC), *BM25]) == 0  # not LoCoMo: its own category names, as they are
    assert "single-hop" not in capsys.readouterr().out
