"""recall-eval as a one-cell experiment through the runner (issue 9).

(a) its JSON is what the rows of ``run_experiment`` of the same one-cell spec say;
(b) each probe is asked at its ``asked_at``: evidence said after it is not in memory;
(c) ``--out DIR`` leaves a run folder that ``report`` and ``load_results`` read, and a
    second invocation resumes it (no cell run again);
(d) bad input is one line on stderr and exit 2.
Fast: bm25 and the hashing embedder (a named fake), no LLM.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from lyra_lab.cli import main
from lyra_lab.corpus import Conversation, Corpus, Probe, Session, Turn
from lyra_lab.experiments import CorpusSpec, recall_eval_spec, run_experiment
from lyra_lab.runs import load_results
from lyra_lab.recall import RECALLERS
from lyra_lab.runs import read_log

ROOT = Path(__file__).resolve().parents[2]
SYNTHETIC = ROOT / "datasets" / "synthetic_small.jsonl"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc)


def _json(capsys, *argv: str) -> dict:
    assert main(["recall-eval", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


# --- (a) the JSON is derived from the runner's rows -------------------------------------------------------


def test_json_equals_the_rows_of_the_same_one_cell_run(tmp_path, capsys):
    out = _json(capsys, str(SYNTHETIC), "--recaller", "dense", "--embedder", "hashing", "--no-cache", "--k", "5",
                "--conversations", "1")
    spec = recall_eval_spec(CorpusSpec(path=SYNTHETIC, conversations=1), RECALLERS.build("dense"), k=5,
                            embedder="hashing")
    df = run_experiment(spec, tmp_path / "run")
    assert len(spec.pipelines) == 1 and len(spec.recallers) == 1 and df["cell_id"].nunique() == 1
    wide = df[df["probe_id"] != ""].pivot_table(index="probe_id", columns="metric", values="value")
    scored = wide[wide["evidence_recall@5"].notna()]  # probes with evidence, not adversarial
    assert out["n_probes"] == len(scored) == 22
    for name in ("evidence_recall@5", "mrr", "ndcg@5"):
        assert out[name] == pytest.approx(scored[name].mean(), abs=1e-12)
    rows = {p["probe_id"]: p for p in out["probes"]}
    assert set(rows) == set(scored.index)
    for probe_id, r in rows.items():
        assert (r["evidence_recall@5"], r["mrr"], r["ndcg@5"]) == pytest.approx(
            tuple(scored.loc[probe_id, ["evidence_recall@5", "mrr", "ndcg@5"]]), abs=1e-12)
    category = df[df["probe_id"] != ""].groupby("probe_id")["category"].first()
    for cat, figures in out["by_category"].items():
        ids = [p for p in scored.index if category[p] == cat]
        assert figures["n_probes"] == len(ids)
        assert figures["evidence_recall@5"] == pytest.approx(scored.loc[ids, "evidence_recall@5"].mean(), abs=1e-12)
    # the synthetic corpus's 6 abstention probes of this conversation are asked but not scored
    assert out["skipped"] == {"adversarial": len(wide) - len(scored)} == {"adversarial": 6}
    assert out["embedder"] == "hashing-256" and out["recaller"] == "dense" and out["k"] == 5


def test_synthetic_bm25_figures_are_those_from_before_the_runner(capsys):
    """Every synthetic probe is asked the day after its conversation ends, so respecting asked_at changes
    nothing there: these are the figures the old code path printed (datasets/README.md: 0.66, 0.59, 0.31, 0.83)."""
    out = _json(capsys, str(SYNTHETIC), "--recaller", "bm25", "--embedder", "none", "--k", "5")
    assert out["n_probes"] == 44 and out["skipped"] == {"adversarial": 12}
    assert out["evidence_recall@5"] == pytest.approx(29 / 44)
    assert out["mrr"] == pytest.approx(25.833333333333332 / 44)
    assert out["ndcg@5"] == pytest.approx(0.5905055508824432)
    assert out["by_category"]["updated_fact"]["mrr"] == pytest.approx(0.3125)
    assert out["by_category"]["multi_hop"]["evidence_recall@5"] == pytest.approx(5 / 6)
    assert out["embedder"] is None


# --- (b) asked_at ---------------------------------------------------------------------------------------


def _asked_at_corpus(tmp_path: Path) -> Path:
    texts = ["I adopted a kitten named Miso.", "The weather was grey all day.", "Olga teaches violin in Porto."]
    turns = tuple(Turn(id=f"c1:t{i}", conversation_id="c1", session_id="c1:s1", role="user", text=text,
                       timestamp=T0 + timedelta(minutes=i)) for i, text in enumerate(texts, start=1))
    conv = Conversation(id="c1", sessions=(Session(id="c1:s1", conversation_id="c1", turns=turns),))
    probes = (
        # asked between t1 and t2: its evidence t1 was said before it
        Probe("early", "c1", "What is the kitten named?", "Miso", evidence=("c1:t1",), category="before",
              asked_at=T0 + timedelta(minutes=1, seconds=30)),
        # asked between t2 and t3: its evidence t3 is said after it, so memory cannot hold it
        Probe("too-early", "c1", "Who teaches violin in Porto?", "Olga", evidence=("c1:t3",), category="after",
              asked_at=T0 + timedelta(minutes=2, seconds=30)),
        # the same question with no asked_at: asked after the last turn
        Probe("at-end", "c1", "Who teaches violin in Porto?", "Olga", evidence=("c1:t3",), category="after"),
    )
    return Corpus("asked-at", (conv,), probes).save(tmp_path / "asked_at.jsonl")


def test_a_probe_does_not_recall_what_is_said_after_its_asked_at(tmp_path, capsys):
    out = _json(capsys, str(_asked_at_corpus(tmp_path)), "--recaller", "bm25", "--embedder", "none", "--k", "2")
    rows = {p["probe_id"]: p for p in out["probes"]}
    # early: memory holds t1 alone, which is its evidence -> recall 1, mrr 1, ndcg 1, retrieved [t1]
    assert rows["early"]["retrieved"] == [["c1:t1"]]
    assert (rows["early"]["evidence_recall@2"], rows["early"]["mrr"], rows["early"]["ndcg@2"]) == (1.0, 1.0, 1.0)
    # too-early: memory holds t1 and t2; t3 (said a minute later) cannot be retrieved -> 0, 0, 0
    assert {t for group in rows["too-early"]["retrieved"] for t in group} <= {"c1:t1", "c1:t2"}
    assert (rows["too-early"]["evidence_recall@2"], rows["too-early"]["mrr"], rows["too-early"]["ndcg@2"]) == (0, 0, 0)
    # at-end: every turn in memory; "olga", "violin", "porto" are in t3 alone -> rank 1
    assert rows["at-end"]["retrieved"][0] == ["c1:t3"]
    assert (rows["at-end"]["evidence_recall@2"], rows["at-end"]["mrr"], rows["at-end"]["ndcg@2"]) == (1.0, 1.0, 1.0)
    assert out["n_probes"] == 3
    assert out["evidence_recall@2"] == out["mrr"] == out["ndcg@2"] == pytest.approx(2 / 3)
    assert out["by_category"]["after"]["evidence_recall@2"] == pytest.approx(0.5)


# --- (c) --out DIR ----------------------------------------------------------------------------------------


def test_out_keeps_a_run_folder_that_report_reads_and_a_rerun_resumes(tmp_path, capsys):
    out_dir = tmp_path / "re"
    argv = [str(SYNTHETIC), "--recaller", "bm25", "--embedder", "none", "--k", "5", "--conversations", "2-2",
            "--out", str(out_dir)]
    first = _json(capsys, *argv)
    assert (out_dir / "spec.json").exists() and (out_dir / "results.parquet").exists()
    df = load_results(out_dir)
    scored = df[(df["metric"] == "evidence_recall@5") & (df["probe_id"] != "")]
    assert len(scored) == first["n_probes"] == 22 and set(df["conversation_id"]) == {"syn-1"}
    assert scored["value"].mean() == pytest.approx(first["evidence_recall@5"])
    assert main(["report", str(out_dir)]) == 0
    capsys.readouterr()
    assert (out_dir / "report").is_dir()

    second = _json(capsys, *argv)
    assert second == first  # the same rows, latencies included: nothing was run again
    starts = [e for e in read_log(out_dir / "log.jsonl") if e.get("event") == "run_started"]
    assert [(e["attempt"], e["cells"], e["todo"]) for e in starts] == [(1, 1, 1), (2, 1, 0)]
    done = [e for e in read_log(out_dir / "log.jsonl") if e.get("event") == "cell_done"]
    assert len(done) == 1  # from the first attempt only


def test_out_holding_another_experiment_is_one_line(tmp_path, capsys):
    out_dir = tmp_path / "re"
    argv = ["recall-eval", str(SYNTHETIC), "--recaller", "bm25", "--embedder", "none", "--conversations", "1",
            "--out", str(out_dir)]
    assert main([*argv, "--k", "5"]) == 0
    capsys.readouterr()
    assert main([*argv, "--k", "3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out" in err and "holds a run of another experiment" in err


# --- (d) bad input ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "says"), [
    (lambda t: [str(SYNTHETIC), "--recaller", "bm42"], "unknown recaller 'bm42'"),
    (lambda t: [str(t / "nope.jsonl"), "--recaller", "bm25"], "does not exist"),
    (lambda t: [str(SYNTHETIC), "--recaller", "bm25", "--k", "0"], "--k must be >= 1"),
    (lambda t: [str(SYNTHETIC), "--recaller", "bm25", "--k", "two"], "invalid int value"),
    (lambda t: [str(SYNTHETIC), "--recaller", "bm25", "--out", str(SYNTHETIC)], "is a file"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, says):
    assert main(["recall-eval", *argv(tmp_path), "--embedder", "none"]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and captured.err.startswith("error:") and says in captured.err
    assert "Traceback" not in captured.err and captured.out == ""


# --- [run] score_adversarial_retrieval (what --include-adversarial sets) -------------------------------------

LOCOMO_MINI = ROOT / "tests" / "fixtures" / "corpus" / "locomo_mini.json"


def _grid(**run) -> dict:
    return {"name": "adv", "corpus": {"path": str(LOCOMO_MINI)},
            "grid": {"chunkers": [{"name": "turn_window", "max_turns": 1}], "recallers": ["bm25"]},
            "run": {"backends": ["fake"], "embedders": ["none"], "ks": [3], **run}}


def test_score_adversarial_retrieval_scores_the_adversarial_probes_and_names_its_cells(tmp_path):
    from lyra_lab._registry import ConfigError
    from lyra_lab.corpus import load
    from lyra_lab.experiments import ExperimentSpec, grid_cells

    with pytest.raises(ConfigError, match="score_adversarial_retrieval must be true or false"):
        ExperimentSpec.from_dict(_grid(score_adversarial_retrieval="yes"))
    plain, off, on = (ExperimentSpec.from_dict(_grid(**extra)) for extra in
                      ({}, {"score_adversarial_retrieval": False}, {"score_adversarial_retrieval": True}))
    # off is the default: same spec.json and cell ids as a file without the key (older runs still resume)
    assert "score_adversarial_retrieval" not in off.to_dict() and off.to_dict() == plain.to_dict()
    assert on.to_dict()["score_adversarial_retrieval"] is True
    corpus = load(LOCOMO_MINI)
    ids = {name: [c.cell_id for c in grid_cells(s, corpus, "sha")] for name, s in (("plain", plain), ("off", off),
                                                                                    ("on", on))}
    assert ids["plain"] == ids["off"] and not set(ids["on"]) & set(ids["off"])

    adversarial = {p.id for p in corpus.probes if p.adversarial and p.evidence}
    assert adversarial
    for spec, scored in ((off, False), (on, True)):
        df = run_experiment(spec, tmp_path / str(scored))
        recall_rows = set(df.loc[df["metric"] == "evidence_recall@3", "probe_id"])
        assert (adversarial <= recall_rows) is scored and bool(adversarial & recall_rows) is scored
