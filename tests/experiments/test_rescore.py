"""``export`` then ``rescore`` on a machine without the original caches: no LLM call, rows identical;
a judge added at rescore pays exactly its own calls, counted in the plan first; no secret in the file.

The run is demo-like (the synthetic companion chat cut to its first sessions, two summarizers, QA
on a few probes) with counting fake models injected for the backend labels, so every request that
reaches a model is counted; the original run folder and user cache are deleted before the rescore.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from lyra_lab.backends import FakeLLM
from lyra_lab.cli import main
from lyra_lab.experiments import Changes, Injected, RunOptions, rescore, rescore_plan, run_experiment, ExperimentSpec
from lyra_lab.runs import export_run, load_results, read_export, scrub

REPO = Path(__file__).resolve().parents[2]
SECRET = "sk-test-never-in-the-file-4242"
EXPERIMENT = """
name = "demo-like"
description = "served from http://alice:hunter22@models.example.com/v1 with key {secret}"
[corpus]
path = "{corpus}"
conversations = 1
max_sessions = 3
[grid]
chunkers = [{{ name = "turn_window", max_turns = 8 }}]
summarizers = [{{ name = "single_pass", max_tokens = 48 }}, {{ name = "map_reduce", max_tokens = 32, merge_max_tokens = 48, max_concurrency = 1 }}]
keep_raw = [false]
recallers = ["bm25", "dense"]
[run]
backends = ["answerer"]
embedders = ["hashing"]
ks = [1, 5]
[qa]
enabled = true
max_probes = 3
max_tokens = 16
"""


def judge_says(messages) -> str:
    return "CORRECT" if "Paris" in messages[-1]["content"] else "WRONG"


@pytest.fixture
def exported(tmp_path, monkeypatch):
    """The exported run (its folder and user cache deleted); the original rows; the answerer's calls."""
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "cache-of-the-first-machine"))
    monkeypatch.setenv("LYRA_TEST_API_KEY", SECRET)
    experiment = tmp_path / "demo-like.toml"
    experiment.write_text(EXPERIMENT.format(secret=SECRET, corpus=REPO / "datasets" / "synthetic_small.jsonl"))
    answerer = FakeLLM()
    rows = run_experiment(ExperimentSpec.from_toml(experiment), tmp_path / "run", RunOptions(progress=False),
                          Injected(backends={"answerer": answerer}))
    assert len(answerer.calls) > 0 and (rows["metric"] == "qa_f1").any()
    out = tmp_path / "demo-like.zip"
    manifest = export_run(tmp_path / "run", out)
    assert manifest["responses"] == len({str(c) for c in answerer.calls})  # one cache entry per distinct call
    import shutil

    shutil.rmtree(tmp_path / "run")
    shutil.rmtree(tmp_path / "cache-of-the-first-machine")
    experiment.unlink()
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "cache-of-another-machine"))
    return out, rows


def test_the_file_holds_no_secret_and_every_member_is_checked(exported, tmp_path):
    out, _ = exported
    with zipfile.ZipFile(out) as zf:
        blob = b"".join(zf.read(name) for name in zf.namelist())
    assert SECRET.encode() not in blob and b"hunter22" not in blob and b"alice:" not in blob
    assert b"http://models.example.com/v1" in blob  # the URL stays, without its credentials
    contents = read_export(out)
    assert {"experiment.toml", "run/spec.json", "cache/responses.sqlite"} <= set(contents.members)
    assert any(name.startswith("run/rows/") for name in contents.members)
    assert any(name.startswith("corpus/") for name in contents.members)
    assert contents.manifest["embedders"][0]["rebuilt_offline"] is True
    # a member changed after export fails the check, named
    tampered = tmp_path / "tampered.zip"
    with zipfile.ZipFile(out) as src, zipfile.ZipFile(tampered, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            dst.writestr(name, data + b"\n" if name == "run/spec.json" else data)
    with pytest.raises(Exception, match="run/spec.json does not match its checksum"):
        read_export(tampered)


def test_rescore_without_the_original_caches_calls_no_llm_and_rebuilds_the_same_rows(exported, tmp_path):
    out, rows = exported
    answerer = FakeLLM(respond=lambda m: "a new answer the file would not hold")
    result = rescore(out, tmp_path / "again", injected=Injected(backends={"answerer": answerer}))
    assert answerer.calls == [] and result.total_paid == 0
    assert result.compared and result.differences == ()
    rebuilt = load_results(tmp_path / "again")
    assert sorted(rebuilt["cell_id"].unique()) == sorted(rows["cell_id"].unique())
    def qa(df):
        return df[df["metric"] == "qa_f1"].set_index(["cell_id", "pipeline", "probe_id"])["value"].sort_index()

    assert qa(rebuilt).equals(qa(rows))


@pytest.mark.parametrize("controls", [True, False])
def test_a_judge_added_at_rescore_pays_exactly_its_calls_and_the_plan_counts_them_first(exported, tmp_path, controls):
    out, rows = exported
    changes = Changes(judges=({"prompt": "correct_wrong_v1", "backend": "judge", "controls": controls},))
    plan = rescore_plan(out, tmp_path / "judged", changes)
    answers = int(((rows["metric"] == "qa_f1") & (rows["probe_id"] != "")).sum())
    assert plan.answers == answers > 0 and plan.new_judges == ("correct_wrong_v1@judge",)
    assert 0 < plan.new_calls <= answers  # a question answered alike by two pipelines is judged once
    answerer, judge = FakeLLM(), FakeLLM(respond=judge_says)
    result = rescore(out, tmp_path / "judged", changes,
                     injected=Injected(backends={"answerer": answerer, "judge": judge}))
    assert answerer.calls == []
    assert (plan.control_calls > 0) == controls  # answers of known truth that measure the new judge's error rates
    assert len(judge.calls) == plan.new_calls + plan.control_calls == result.total_paid
    assert result.paid_calls["judge"] == plan.new_calls
    assert result.paid_calls.get("judge_control", 0) == plan.control_calls
    judged = result.rows[result.rows["metric"] == "judge"]
    assert len(judged) == answers  # every answer graded, the repeats from the cache


def test_cli_export_rescore_and_compare_read_the_file(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "first-machine"))
    experiment = tmp_path / "cli.toml"
    experiment.write_text(EXPERIMENT.format(secret="", corpus=REPO / "datasets" / "synthetic_small.jsonl")
                          .replace('backends = ["answerer"]', 'backends = ["fake"]'))
    assert main(["run", str(experiment), "--run-dir", str(tmp_path / "run"), "--yes", "--quiet", "--no-report"]) == 0
    capsys.readouterr()
    out = tmp_path / "cli.zip"
    assert main(["export", str(tmp_path / "run"), "--out", str(out)]) == 0
    assert "cached LLM responses" in capsys.readouterr().out
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "second-machine"))
    assert main(["rescore", str(out), "--run-dir", str(tmp_path / "again")]) == 0
    printed = capsys.readouterr().out
    assert "new: 0 LLM calls" in printed and "LLM calls paid: 0" in printed and "rows identical" in printed
    assert main(["rescore", str(out), "--run-dir", str(tmp_path / "judged"), "--judge", "fake:correct_wrong_v1",
                 "--plan"]) == 0
    planned = capsys.readouterr().out
    assert "judge calls" in planned and "correct_wrong_v1@fake" in planned
    assert not (tmp_path / "judged" / "rows").exists()  # --plan runs nothing
    assert main(["rescore", str(out), "--run-dir", str(tmp_path / "again")]) == 2  # not a new folder
    assert "already holds a run" in capsys.readouterr().err
    assert main(["compare", str(out), str(tmp_path / "again"), "--out", str(tmp_path / "cmp")]) == 0
    assert (tmp_path / "cmp" / "paired_comparisons.csv").exists()


def test_scrub_masks_secret_environment_values_and_url_credentials():
    text = "key sk-abcdef123 at https://bob:pw@host/v1?api_key=zzz&api-version=3 and http://127.0.0.1:8080/v1"
    clean = scrub(text, {"OPENAI_API_KEY": "sk-abcdef123", "HOME": "/home/x"})
    assert clean == "key *** at https://host/v1?api_key=***&api-version=3 and http://127.0.0.1:8080/v1"


def test_another_scorer_or_other_budgets_call_no_llm(exported, tmp_path):
    out, rows = exported
    answerer = FakeLLM(respond=lambda m: "a new answer the file would not hold")
    changes = Changes(scorer="locomo", score_at_tokens=(128,))
    assert rescore_plan(out, tmp_path / "plan-only", changes).new_calls == 0
    result = rescore(out, tmp_path / "rescored", changes, injected=Injected(backends={"answerer": answerer}))
    assert answerer.calls == [] and result.total_paid == 0 and not result.compared
    qa = result.rows[result.rows["metric"] == "qa_f1"]
    assert len(qa) == int((rows["metric"] == "qa_f1").sum()) and set(qa["qa.scorer"]) == {"locomo"}
    assert "answer_in_context@128tok" in set(result.rows["metric"])
    assert "answer_in_context@512tok" not in set(result.rows["metric"])
