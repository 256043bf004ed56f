"""The per-probe inspector: ``inspect_probe(run_dir, probe_id)`` and ``lyra-lab show RUN_DIR PROBE_ID``."""

from __future__ import annotations

import json
import re

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import FakeLLM, HashingEmbedder
from lyra_lab.cli import main
from lyra_lab.experiments import Injected, inspect_probe
from lyra_lab.experiments import ExperimentSpec, run_experiment
from lyra_lab.runs import read_log

RUN = """
name = "inspect"
[corpus]
path = "tiny.jsonl"
conversations = 1
[grid]
chunkers = [{ name = "turn_window", max_turns = 4 }]
summarizers = ["single_pass"]
recallers = ["bm25", "tiered"]
[run]
backends = ["fake"]
embedders = ["hashing"]
ks = [1, 3]
cache = "off"
[qa]
enabled = true
judges = [{ prompt = "correct_wrong_v1", backend = "judge" }]
"""


def fake(messages) -> str:
    text = messages[-1]["content"]
    if "Question:" in text:
        return "Biscuit" if "Biscuit" in text.partition("Question:")[2] else "no idea"
    return "SUMMARY " + " ".join(re.findall(r"\w+", text)[:8])


@pytest.fixture
def run_dir(write_toml, corpus_path, tmp_path):
    spec = ExperimentSpec.from_toml(write_toml(RUN))
    run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": FakeLLM(respond=fake), "judge": FakeLLM(respond=lambda m: "CORRECT")}, embedders={"hashing": HashingEmbedder()}))
    return tmp_path / "run"


def test_the_view_has_question_gold_evidence_and_per_pipeline_hits_context_answer_verdicts(run_dir):
    view = inspect_probe(run_dir, "u0:q0")
    assert view.question == "what did I say: Biscuit?" and view.gold == "Biscuit"
    assert view.conversation_id == "u0" and view.category == "single_fact"
    assert view.evidence == (("u0:s0:t0", "user: hi, by the way my dog is called Biscuit"),)
    assert [p.pipeline for p in view.pipelines] == ["turn_window+single_pass+none|bm25",
                                                    "turn_window+single_pass+none|tiered"]
    recalls = {(e["recaller"]): e["hits"] for e in read_log(run_dir / "log.jsonl")
               if e["event"] == "recall" and e["probe_id"] == "u0:q0"}
    for p in view.pipelines:
        # ranked as recalled, with the scores the recall event logged
        assert [[h.entry_id, h.score] for h in p.hits] == recalls[p.recaller]
        assert [h.rank for h in p.hits] == list(range(1, len(p.hits) + 1))
        assert p.answer == "Biscuit" and p.verdicts == (("correct_wrong_v1@judge", 1, "CORRECT"),)
        assert p.scores["qa_em"] == 1.0 and p.context_tokens == p.scores["context_tokens"]
        for h in p.hits:  # kind from the entry, evidence where the entry covers the gold turn
            assert h.kind == h.entry_id.partition(":")[0]
            assert h.evidence == ("u0:s0:t0" in h.turn_ids)
        assert p.context and all(h.text[:20] in p.context for h in p.hits if h.kind == "turn")
    kinds = {h.kind for p in view.pipelines for h in p.hits}
    assert {"turn", "summary"} <= kinds  # raw turns and digests of the same memory
    summary = next(h for p in view.pipelines for h in p.hits if h.kind == "summary")
    assert summary.text.startswith("SUMMARY") and len(summary.turn_ids) == 4
    bm25 = view.pipelines[0]
    assert bm25.hits[0].entry_id == "turn:u0:s0:t0" and bm25.hits[0].evidence  # the fact's own turn ranks first
    frame = view.hits_frame()
    assert list(frame.columns) == ["pipeline", "rank", "entry_id", "kind", "score", "evidence", "text"]
    assert len(frame) == sum(len(p.hits) for p in view.pipelines)
    wide = view.to_frame()
    assert wide["judge:correct_wrong_v1@judge"].tolist() == [1, 1] and wide["answer"].tolist() == ["Biscuit"] * 2


def test_a_run_logged_before_probe_detail_events_still_shows_hits_from_the_recall_events(run_dir):
    log = run_dir / "log.jsonl"
    lines = [line for line in log.read_text(encoding="utf-8").splitlines()
             if json.loads(line)["event"] != "probe_detail"]
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    view = inspect_probe(run_dir, "u0:q0")
    p = view.pipelines[0]
    assert p.context is None and p.answer == "Biscuit"
    assert p.hits[0].entry_id == "turn:u0:s0:t0" and p.hits[0].evidence
    assert p.hits[0].text == "user: hi, by the way my dog is called Biscuit"  # from the corpus
    assert "context: not recorded" in view.render()


def test_unknown_probe_suggests_the_closest_id(run_dir):
    with pytest.raises(ConfigError, match=r"no probe 'u0:q00' in this run; did you mean 'u0:q0'\?"):
        inspect_probe(run_dir, "u0:q00")
    with pytest.raises(ConfigError, match="no such run folder"):
        inspect_probe(run_dir / "missing", "u0:q0")


def test_show_prints_the_probe_and_fails_in_one_line(run_dir, tmp_path, capsys):
    assert main(["show", str(run_dir), "u0:q0", "--pipeline", "|bm25"]) == 0
    page = capsys.readouterr().out  # the page: a few lines per pipeline
    assert "== turn_window+single_pass+none|bm25  (backend fake, embedder hashing, seed 0)" in page
    assert "evidence at rank 1 of" in page and "answer: Biscuit  (judge correct_wrong_v1@judge: correct)" in page
    assert main(["show", str(run_dir), "u0:q0", "--pipeline", "|bm25", "--full"]) == 0
    out = capsys.readouterr().out
    assert "question: what did I say: Biscuit?" in out and "gold:     Biscuit" in out
    assert "== turn_window+single_pass+none|bm25  (backend fake, embedder hashing, seed 0, cell u0-" in out
    assert "|tiered" not in out
    assert re.search(r"  1\.\s+\d+\.\d{4}  turn\s+turn:u0:s0:t0 \*evidence\*", out)
    assert "answer: Biscuit" in out and "judge correct_wrong_v1@judge: correct" in out
    assert "context (" in out
    assert main(["show", str(run_dir), "u0:q0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["probe_id"] == "u0:q0" and len(data["pipelines"]) == 2
    for argv, expected in ((["show", str(run_dir), "u0:qq"], "did you mean 'u0:qa'?"),
                           (["show", str(tmp_path / "nowhere"), "u0:q0"], "does not exist"),
                           (["show", str(run_dir), "u0:q0", "--pipeline", "dense"], "no pipeline of probe")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("error: ") and expected in err, err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["show", str(empty), "u0:q0"]) == 2
    assert "not a lyra-lab run folder" in capsys.readouterr().err
