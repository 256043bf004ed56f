"""recall-eval (a one-cell run of the runner) on a tiny corpus: exact arithmetic with a scripted recaller, then the CLI."""

import argparse
import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.corpus import Conversation, Corpus, Probe, Session, Turn
from lyra_lab.experiments import CorpusSpec, run_recall_eval
from lyra_lab.recall import Hit

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc)


def _conv(cid, texts):
    turns = tuple(Turn(id=f"{cid}:t{i}", conversation_id=cid, session_id=f"{cid}:s1",
                       role="user" if i % 2 else "assistant", text=text, timestamp=T0 + timedelta(minutes=i))
                  for i, text in enumerate(texts, start=1))
    return Conversation(id=cid, sessions=(Session(id=f"{cid}:s1", conversation_id=cid, turns=turns),))


def tiny_corpus():
    c1 = _conv("c1", [
        "I started violin lessons in March with a teacher named Olga.",
        "That sounds wonderful, how is it going so far?",
        "My sister Maya moved to Lisbon last week.",
        "The weather was rainy all weekend.",
    ])
    c2 = _conv("c2", [
        "We adopted a beagle puppy called Biscuit.",
        "I am learning to bake sourdough bread.",
    ])
    probes = (
        Probe("p1", "c1", "Who teaches the violin lessons?", "Olga", evidence=("c1:t1",), category=1),
        Probe("p2", "c1", "Where did Maya move?", "Lisbon", evidence=("c1:t3", "c1:t4"), category=2),
        Probe("p3", "c2", "What is the puppy called?", "Biscuit", evidence=("c2:t1",), category=1),
        Probe("p4", "c2", "What did Maya bake?", "bread", evidence=("c2:t2",), category=5, adversarial=True),
        Probe("p5", "c1", "Anything else?", "no", category=4),
    )
    return Corpus("tiny", (c1, c2), probes)


@dataclass(frozen=True)
class Scripted:
    """A fake recaller: fixed entry ids per question, in order, the first k of them, for exact arithmetic.

    Like a real recaller it returns at most k hits and only entries in memory at the time asked
    (an id not yet in memory is left out, keeping the order of the rest).
    """

    ranking: tuple = ()

    def recall(self, store, query, k):
        ids = [i for i in dict(self.ranking).get(query.text, ()) if i in store][:k]
        entries = [store.get(i) for i in ids]
        assert all(e.conversation_id == query.conversation_id for e in entries)
        return [Hit(entry=e, score=1.0 / (r + 1), rank=r) for r, e in enumerate(entries)]


SCRIPT = Scripted((
    ("Who teaches the violin lessons?", ("turn:c1:t2", "turn:c1:t4", "turn:c1:t1")),  # evidence at rank 3
    ("Where did Maya move?", ("turn:c1:t3", "turn:c1:t1", "turn:c1:t2")),             # 1 of 2 evidence at rank 1
    ("What is the puppy called?", ("turn:c2:t2", "turn:c2:t1")),                      # evidence at rank 2
    ("What did Maya bake?", ("turn:c2:t2",)),
))


def recall_eval(tmp_path, recaller, *, k, include_adversarial=False, categories=None, conversations=None):
    path = tiny_corpus().save(tmp_path / "tiny.jsonl")
    spec = CorpusSpec(path=path, categories=None if categories is None else tuple(str(c) for c in categories),
                      conversations=conversations)
    return run_recall_eval(spec, recaller, k=k, include_adversarial=include_adversarial, progress=False)


def test_recall_eval_hand_computed(tmp_path):
    result = recall_eval(tmp_path, SCRIPT, k=2)
    # p4 adversarial and p5 without evidence are skipped -> 3 probes
    assert result.n_probes == 3
    assert dict(result.skipped) == {"adversarial": 1, "no_evidence": 1}
    # recall@2: p1 top2 {t2,t4} -> 0/1; p2 top2 {t3,t1} -> 1/2; p3 top2 {t2,t1} -> 1/1. mean = 1.5/3 = 0.5
    assert result.recall == pytest.approx(0.5)
    # mrr over the top 2: p1 -> 0 (rank 3 is cut), p2 -> 1, p3 -> 1/2. mean = 1.5/3 = 0.5
    assert result.mrr == pytest.approx(0.5)
    # ndcg@2: p1 0; p2 DCG 1 / IDCG (2 evidence) 1 + 1/log2(3) = 0.61315; p3 (1/log2(3)) / 1 = 0.63093
    assert result.ndcg == pytest.approx((0 + 1 / 1.6309298 + 0.6309298) / 3, abs=1e-6)
    d = result.to_dict()
    assert list(d)[:4] == ["n_probes", "evidence_recall@2", "mrr", "ndcg@2"]
    assert d["by_category"]["2"]["evidence_recall@2"] == pytest.approx(0.5)
    assert d["by_category"]["1"]["n_probes"] == 2


def test_recall_eval_k3_adversarial_and_filters(tmp_path):
    r = recall_eval(tmp_path, SCRIPT, k=3)
    # recall@3: p1 1, p2 1/2, p3 1 -> 2.5/3; mrr: 1/3, 1, 1/2 -> (11/6)/3
    assert r.recall == pytest.approx(2.5 / 3) and r.mrr == pytest.approx(11 / 18)
    adv = recall_eval(tmp_path, SCRIPT, k=1, include_adversarial=True)
    assert adv.n_probes == 4 and [p.probe_id for p in adv.per_probe] == ["p1", "p2", "p3", "p4"]
    only2 = recall_eval(tmp_path, SCRIPT, k=1, categories=[2])
    assert only2.n_probes == 1 and only2.recall == 0.5 and only2.skipped["category"] == 4
    first = recall_eval(tmp_path, SCRIPT, k=1, conversations=1)
    assert {p.conversation_id for p in first.per_probe} == {"c1"}
    with pytest.raises(ConfigError, match="nope"):
        recall_eval(tmp_path, SCRIPT, k=1, conversations=("nope",))


def _cli(argv):
    from lyra_lab.commands import recall_eval as cmd

    parser = argparse.ArgumentParser()
    cmd.add_parser(parser.add_subparsers())
    return cmd.run(parser.parse_args(argv))


def test_cli_json_with_bm25_and_dense(tmp_path, capsys):
    path = tiny_corpus().save(tmp_path / "tiny.jsonl")
    assert _cli(["recall-eval", str(path), "--recaller", "bm25", "--embedder", "hashing", "--no-cache", "--k", "1",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # each question shares a rare word with its first evidence turn (violin, maya, puppy) -> found at rank 1;
    # p2's second evidence turn (the weather) is not: recall@1 = (1 + 1/2 + 1) / 3
    assert out["n_probes"] == 3 and out["recaller"] == "bm25"
    assert out["evidence_recall@1"] == pytest.approx(2.5 / 3) and out["mrr"] == 1.0
    assert out["embedder"] is None  # bm25 embeds nothing
    assert out["skipped"] == {"adversarial": 1, "no_evidence": 1}
    cache = tmp_path / "emb.sqlite"
    argv = ["recall-eval", str(path), "--recaller", "dense", "--embedder", "hashing", "--cache", str(cache),
            "--k", "4", "--json", "--categories", "1,2"]
    assert _cli(argv) == 0
    out = json.loads(capsys.readouterr().out)
    # k=4 covers every turn of c1 and both of c2 -> every evidence turn is found
    assert out["n_probes"] == 3 and out["evidence_recall@4"] == 1.0 and out["embedder"] == "hashing-256"
    assert cache.exists()
    assert _cli(argv[:-3]) == 0  # human-readable
    text = capsys.readouterr().out
    assert "evidence_recall@4" in text and "all" in text


def test_cli_errors(tmp_path):
    path = tiny_corpus().save(tmp_path / "tiny.jsonl")
    with pytest.raises(ConfigError, match="no probes to evaluate"):
        _cli(["recall-eval", str(path), "--recaller", "bm25", "--embedder", "none", "--categories", "9"])
    with pytest.raises(ConfigError, match="unknown recaller"):
        _cli(["recall-eval", str(path), "--recaller", "nope", "--embedder", "none"])
    with pytest.raises(ConfigError, match="--k"):
        _cli(["recall-eval", str(path), "--recaller", "bm25", "--k", "0"])


def test_cli_main_exit_code(tmp_path, capsys):
    from lyra_lab.cli import main

    path = tiny_corpus().save(tmp_path / "tiny.jsonl")
    try:
        code = main(["recall-eval", str(path), "--recaller", '{"name": "bm25"}', "--embedder", "none", "--json"])
    except ImportError as exc:  # another command module of the CLI may still be missing
        pytest.skip(f"cli not importable yet: {exc}")
    assert code == 0 and json.loads(capsys.readouterr().out)["n_probes"] == 3
    assert main(["recall-eval", str(tmp_path / "missing.jsonl"), "--recaller", "bm25", "--embedder", "none"]) == 2
    assert "error:" in capsys.readouterr().err


def test_locomo_bm25_one_conversation():
    from lyra_lab.corpus import load
    from lyra_lab.recall import RECALLERS
    from tests.helpers.locomo import locomo_path

    corpus = load(locomo_path())
    cut = CorpusSpec(path=locomo_path(), conversations=1, categories=("1", "2", "3", "4"))
    result = run_recall_eval(cut, RECALLERS.build("bm25"), k=10, progress=False, loaded=corpus)
    conv = corpus.conversations[0]
    expected = [p for p in corpus.probes_for(conv.id) if str(p.category) in "1234" and p.evidence]
    assert result.n_probes == len(expected) > 100
    assert {p.conversation_id for p in result.per_probe} == {conv.id}
    # 10 of ~400 turns at random would find ~2.5% of evidence; lexical recall must do far better
    assert 0.3 < result.recall <= 1.0
    assert 0.0 < result.mrr <= 1.0 and 0.0 < result.ndcg <= 1.0
