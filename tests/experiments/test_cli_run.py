"""``lyra-lab run``: runs a grid with the real strategy registries, resumes, and fails in one line."""

from __future__ import annotations

from collections import Counter

from lyra_lab.backends import context_window
from lyra_lab.cli import main
from lyra_lab.commands.demo import demo_spec_path
from lyra_lab.experiments import ExperimentSpec
from lyra_lab.experiments.grid import load_corpus, select, spec_label
from lyra_lab.recall import ceiling_names

EXPERIMENT = """
name = "cli-tiny"
[corpus]
path = "tiny.jsonl"
max_probes = 3
[grid]
chunkers = [{ name = "turn_window", max_turns = 2 }, { name = "token_budget", max_tokens = 60 }]
summarizers = ["single_pass", "map_reduce"]
rollups = ["none", { name = "time_ladder" }]
budgets = [60]
recallers = ["dense", "bm25", "hybrid"]
[run]
backends = ["fake"]
embedders = ["hashing"]
ks = [1, 3]
cache = "off"
"""


def test_run_command_runs_the_grid_writes_the_report_and_resumes(write_toml, tmp_path, capsys):
    toml = write_toml(EXPERIMENT)
    run_dir = tmp_path / "out"
    assert main(["run", str(toml), "--run-dir", str(run_dir), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"run folder: {run_dir}" in out and "16 cells" in out  # 8 memory pipelines x 2 conversations
    assert (run_dir / "report" / "summary.md").exists() and (run_dir / "results.parquet").exists()
    # the compact table, as the demo prints it, and where the full summary is (not summary.md's markdown)
    assert "token_budget+map_reduce+time_ladder|hybrid" in out and "\\|" not in out
    assert f"full table with 95% CIs: {run_dir / 'report' / 'summary.md'}" in " ".join(out.split())  # wrapped
    rows_before = {p.name: p.stat().st_mtime_ns for p in (run_dir / "rows").glob("*.jsonl")}
    assert main(["run", str(toml), "--run-dir", str(run_dir), "--quiet", "--no-report"]) == 0
    rows_after = {p.name: p.stat().st_mtime_ns for p in (run_dir / "rows").glob("*.jsonl")}
    assert rows_after == rows_before  # resumed: nothing recomputed or rewritten


def test_run_command_reports_a_bad_key_in_one_line_and_exits_2(write_toml, capsys):
    toml = write_toml(EXPERIMENT.replace("[run]", "[run]\nbackendz = ['fake']"))
    assert main(["run", str(toml), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'backendz'" in err and "[run]" in err


def test_run_command_reports_a_missing_corpus_in_one_line(write_toml, tmp_path, capsys):
    toml = write_toml(EXPERIMENT.replace('path = "tiny.jsonl"', 'path = "nowhere.jsonl"'))
    assert main(["run", str(toml), "--run-dir", str(tmp_path / "x"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "nowhere.jsonl" in err


def test_the_bundled_demo_experiment_is_valid_and_sized_as_documented():
    spec = ExperimentSpec.from_toml(demo_spec_path())
    assert spec.corpus.path.exists()
    labels = [label for label, _ in spec.recallers]
    assert len(spec.pipelines) == 2 and labels == ["dense", "bm25", "hybrid", "oracle", "full_context"]
    assert [label for label in labels if label in ceiling_names()] == ["oracle", "full_context"]  # both ceilings
    assert {p.keep_raw for p in spec.pipelines} == {True, False}
    assert {p.kind_names()["summarizer"] for p in spec.pipelines} == {"single_pass"}
    assert [spec_label(b) for b in spec.backends] == ["local"] and spec.embedders == ("e5",)
    # full_context's room holds every conversation's whole memory: turns, at most 1,256 tokens, and summaries
    assert context_window(spec.backends[0]) == 3072


def test_the_demo_answers_a_few_probes_scored_without_a_judge_within_its_time():
    """The demo's QA stage: the local model answers, scored by squad's F1 (no judge: the split reads qa_f1).

    Sized for ~5 minutes on 2 quiet cores: the answers it asks (probes x pipelines, before the response
    cache answers repeated contexts once) stay at most 80, ~1.5 s each beside the demo's ~220 s without QA.
    """
    spec = ExperimentSpec.from_toml(demo_spec_path())
    qa = spec.qa
    assert qa.enabled and not qa.judges and qa.scorer == "squad" and qa.backend in (None, "")
    assert qa.repeats == 1 and qa.max_tokens <= 16
    assert {p.context_budget for p in spec.pipelines} == {512}  # the answerer reads the 512 tokens the retrieval headline scores
    replayed = select(load_corpus(spec.corpus), spec.corpus).corpus
    per_conversation = Counter(p.conversation_id for p in replayed.probes)
    answered = sum(min(qa.max_probes or n, n) for n in per_conversation.values())
    assert answered == len(replayed.conversations)  # one probe a conversation: every conversation paired
    assert answered * len(spec.pipelines) * len(spec.recallers) <= 80


def test_the_demo_corpus_carries_enough_probes_and_conversations_for_a_paired_difference_to_hold():
    """>= 50 answerable probes, and >= 8 conversations: the paired test flips whole conversations, so with
    k of them no p is below 2/2^k, and Holm over the demo's 5 comparisons (its 6 pipelines besides the
    two ceilings) needs 2/2^k * 5 < 0.05."""
    spec = ExperimentSpec.from_toml(demo_spec_path())
    replayed = select(load_corpus(spec.corpus), spec.corpus).corpus
    answerable = [p for p in replayed.probes if p.evidence]
    assert len(answerable) >= 50
    conversations = {p.conversation_id for p in answerable}
    contenders = [label for label, _ in spec.recallers if label not in ceiling_names()]  # ceilings bound, not compete
    comparisons = len(spec.pipelines) * len(contenders) - 1
    assert 2 / 2 ** len(conversations) * comparisons < 0.05
    summary_calls = sum(len(c.sessions) for c in replayed.conversations)  # single_pass: one call per session
    assert summary_calls <= 30  # a few minutes of the bundled model on 2 cores


def test_a_missing_api_key_fails_before_any_cell_runs(write_toml, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    toml = write_toml(EXPERIMENT.replace('backends = ["fake"]', 'backends = ["fake", "openai/gpt-4o-mini"]'))
    assert main(["run", str(toml), "--run-dir", str(tmp_path / "x"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "OPENAI_API_KEY" in err
    assert not list((tmp_path / "x" / "rows").glob("*.jsonl"))  # not even the fake backend's cells ran
