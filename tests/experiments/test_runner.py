"""run_experiment: tidy rows, one replay per memory pipeline, resume after interruption, failures, caches."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import FakeLLM
from lyra_lab.experiments import ExperimentSpec, Injected, RunOptions, run_experiment
from lyra_lab.runs import load_results
from lyra_lab.runs import read_log

SCHEMA = ["run", "cell_id", "pipeline", "chunker", "summarizer", "rollup", "recaller", "backend", "embedder", "seed",
          "corpus", "conversation_id", "probe_id", "category", "metric", "value", "simulated"]


class Fake(FakeLLM):
    """FakeLLM that counts calls and can be told to raise after ``interrupt_after`` calls."""

    def __init__(self, interrupt_after: int | None = None, exc: BaseException | None = None, fail_for=None):
        super().__init__(fail=fail_for)
        self.interrupt_after = interrupt_after
        self.exc = exc or KeyboardInterrupt()

    def complete(self, messages, **params):
        if self.interrupt_after is not None and len(self.calls) >= self.interrupt_after:
            raise self.exc
        return super().complete(messages, **params)


def stable(df: pd.DataFrame) -> pd.DataFrame:
    """Rows minus wall-clock measurements, in a canonical order."""
    keep = df[~df["metric"].str.contains("latency")].drop(columns=["attempt"])
    return keep.sort_values(["cell_id", "pipeline", "probe_id", "metric"]).reset_index(drop=True)


def test_a_run_writes_the_run_folder_and_tidy_rows(write_toml, registries, tmp_path):
    spec = ExperimentSpec.from_toml(write_toml(), registries)
    llm = Fake()
    df = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": llm}))
    run = tmp_path / "run"
    for name in ("lyra-run.json", "spec.json", "attempts.jsonl", "log.jsonl", "results.parquet"):
        assert (run / name).exists(), name
    assert len(list((run / "rows").glob("*.jsonl"))) == 8  # 4 memory pipelines x 2 conversations
    assert list(df.columns[: len(SCHEMA)]) == SCHEMA
    assert {"chunker.max_turns", "recaller.method", "pipeline.keep_raw"} <= set(df.columns)
    assert df["pipeline"].nunique() == 12 and "turn_window+concat+none|hybrid" in set(df["pipeline"])
    assert not df.duplicated(["pipeline", "conversation_id", "probe_id", "metric"]).any()
    assert df["simulated"].all() and (df["backend"] == "fake").all() and (df["embedder"] == "hashing").all()
    metrics = set(df["metric"])
    assert {"evidence_recall@1", "coverage_recall@3", "recall_all@3", "recall_any@3", "mrr", "ndcg@3", "ndcg_any@3",
            "session_recall@3", "answer_in_context@512tok", "evidence_recall@512tok", "retention",
            "context_tokens", "recall_latency_s", "summarize.calls", "summarize.latency_s",
            "summarize.latency_p95_s", "summarize.prompt_tokens", "summarize.cost_usd", "rollup.calls",
            "embed.calls", "memory_entries", "memory_tokens", "cached_calls"} <= metrics
    # abstention probes get no retrieval score; the answerable ones do
    abstain, answerable = (set(df[df["probe_id"] == p]["metric"]) for p in ("u0:qa", "u0:q0"))
    assert "evidence_recall@1" not in abstain and "context_tokens" in abstain
    assert {"evidence_recall@1", "retention", "context_tokens"} <= answerable
    assert (df[df["probe_id"] == "u0:qa"]["category"] == "abstention").all()
    # summarize.calls: concat = one call per session (3); per_chunk with 2-turn windows = 2 chunks + 1 merge per session
    calls = df[(df["metric"] == "summarize.calls") & (df["chunker"] == "turn_window")].groupby("summarizer")["value"]
    assert calls.unique().to_dict() == {"concat": [3.0], "per_chunk": [9.0]}
    # one replay per memory pipeline: every LLM call was made once, not once per recaller
    per_cell = df[df["metric"] == "summarize.calls"].drop_duplicates("cell_id")["value"].sum()
    assert len(llm.calls) == per_cell
    events = list(read_log(run / "log.jsonl"))
    assert sum(e["event"] == "cell_started" for e in events) == 8
    assert sum(e["event"] == "cell_done" for e in events) == 8
    assert sum(e["event"] == "llm_call" for e in events) == len(llm.calls)
    assert not (run / "env.json").exists()  # the environment is one record per attempt now
    [env] = [json.loads(line) for line in (run / "attempts.jsonl").read_text().splitlines()]
    assert {"attempt", "packages", "git", "python", "machine", "dataset_sha256", "started_at"} <= set(env)
    assert env["attempt"] == 1 and (df["attempt"] == 1).all()
    assert json.loads((run / "lyra-run.json").read_text()) == {"schema_version": 3}
    assert set(env["git"]) == {"commit", "dirty"} and env["packages"]["numpy"]
    saved = json.loads((run / "spec.json").read_text())
    assert saved["corpus_sha256"] == env["dataset_sha256"] and len(saved["pipelines"]) == 4
    pd.testing.assert_frame_equal(load_results(run), df)


def test_resume_after_an_interrupt_skips_finished_cells_and_matches_an_uninterrupted_run(
        write_toml, registries, tmp_path):
    spec = ExperimentSpec.from_toml(write_toml(), registries)
    reference_llm = Fake()
    reference = run_experiment(spec, tmp_path / "reference", None, Injected(backends={"fake": reference_llm}))
    total_calls = len(reference_llm.calls)

    run = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        run_experiment(spec, run, None, Injected(backends={"fake": Fake(interrupt_after=total_calls // 2)}))
    finished = {p.stem for p in (run / "rows").glob("*.jsonl")}
    assert 0 < len(finished) < 8
    done_calls = reference[(reference["metric"] == "summarize.calls") & reference["cell_id"].isin(finished)] \
        .drop_duplicates("cell_id")["value"].sum()

    resumed_llm = Fake()
    resumed = run_experiment(spec, run, None, Injected(backends={"fake": resumed_llm}))
    # finished cells were not recomputed: only the unfinished cells' calls were made
    assert len(resumed_llm.calls) == total_calls - done_calls
    assert not resumed.duplicated(["pipeline", "conversation_id", "probe_id", "metric"]).any()
    pd.testing.assert_frame_equal(stable(resumed), stable(reference))
    # each row names the attempt that wrote it: the finished cells the first, the rest the second
    by_cell = resumed.groupby("cell_id")["attempt"].unique().map(list).to_dict()
    assert by_cell == {c: [1] if c in finished else [2] for c in by_cell}
    attempts = [json.loads(line) for line in (run / "attempts.jsonl").read_text().splitlines()]
    assert [a["attempt"] for a in attempts] == [1, 2]
    assert [a["cells_finished_before"] for a in attempts] == [0, len(finished)]
    events = [e["event"] for e in read_log(run / "log.jsonl")]
    assert events.count("cell_done") == 8 and events.count("run_started") == 2
    assert events.count("run_interrupted") == 1 and events.index("run_interrupted") < events.index("run_done")

    # a third run has nothing left to do
    idle = Fake()
    again = run_experiment(spec, run, None, Injected(backends={"fake": idle}))
    assert idle.calls == [] and len(again) == len(resumed)


def test_a_failing_backend_fails_its_cells_only_and_the_next_run_retries_them(write_toml, registries, tmp_path):
    spec = ExperimentSpec.from_toml(write_toml(), registries)
    flaky = Fake(fail_for=lambda msgs: "Porto" in msgs[-1]["content"] or "pottery" in msgs[-1]["content"])
    df = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": flaky}))
    failed = df.attrs["failed_cells"]
    assert failed and all("HTTP 500" in error for _, error in failed)
    assert set(df["conversation_id"]) == {"u0"}  # u1 holds the facts the fake chokes on
    events = list(read_log(tmp_path / "run" / "log.jsonl"))
    assert sum(e["event"] == "cell_failed" for e in events) == len(failed) == 4
    healed = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": Fake()}))
    assert healed.attrs["failed_cells"] == [] and set(healed["conversation_id"]) == {"u0", "u1"}
    assert healed["cell_id"].nunique() == 8


def test_a_folder_refuses_a_different_spec_unless_started_fresh(write_toml, registries, tmp_path):
    run_experiment(ExperimentSpec.from_toml(write_toml(), registries), tmp_path / "run", None, Injected(backends={"fake": Fake()}))
    other = ExperimentSpec.from_toml(write_toml(open(write_toml()).read().replace("ks = [1, 3]", "ks = [1, 5]")),
                                     registries)
    with pytest.raises(ConfigError, match="different experiment spec"):
        run_experiment(other, tmp_path / "run", None, Injected(backends={"fake": Fake()}))
    df = run_experiment(other, tmp_path / "run", RunOptions(resume=False), Injected(backends={"fake": Fake()}))
    assert "evidence_recall@5" in set(df["metric"]) and "evidence_recall@3" not in set(df["metric"])


def test_corpus_limits_drop_unanswerable_probes_and_qa_scores_a_subset(write_toml, registries, tmp_path):
    text = open(write_toml()).read().replace('path = "tiny.jsonl"', 'path = "tiny.jsonl"\nconversations = 1\n'
                                             'max_sessions = 2')
    text = text.replace('summarizers = ["concat", "per_chunk"]', 'summarizers = ["concat"]')
    spec = ExperimentSpec.from_toml(write_toml(text, extra="[qa]\nenabled = true\nmax_probes = 2\n"), registries)
    answers = Fake()
    answers.enqueue(*["Biscuit"] * 0)
    df = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": answers}))
    assert set(df["conversation_id"]) == {"u0"}
    # u0:q2's evidence lies in the third session, which was cut; the abstention probe stays
    assert set(df["probe_id"]) - {""} == {"u0:q0", "u0:q1", "u0:qa"}
    qa = df[df["metric"] == "qa_f1"]
    assert qa.groupby("pipeline")["probe_id"].apply(set).map(len).eq(2).all()
    answer_calls = df[df["metric"] == "answer.calls"]["value"]
    assert (answer_calls == 2).all()
    started = next(e for e in read_log(tmp_path / "run" / "log.jsonl") if e["event"] == "run_started")
    assert started["dropped_probes"] == 1 and started["dropped_sessions"] == 1


def test_the_response_cache_makes_a_rerun_free(write_toml, registries, tmp_path):
    text = open(write_toml()).read().replace('cache = "off"', 'cache = "run"')
    spec = ExperimentSpec.from_toml(write_toml(text), registries)
    first = Fake()
    df1 = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": first}))
    assert (tmp_path / "run" / "cache" / "responses.sqlite").exists()
    for rows in (tmp_path / "run" / "rows").glob("*.jsonl"):
        rows.unlink()  # lose the results, keep the caches
    second = Fake()
    df2 = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": second}))
    assert first.calls and second.calls == []
    def per_cell(df, metric):
        return df[df["metric"] == metric].drop_duplicates("cell_id")["value"].sum()

    requests = per_cell(df1, "summarize.calls")
    # pipelines that send identical prompts share answers already within the first run
    assert per_cell(df1, "cached_calls") == requests - len(first.calls)
    assert per_cell(df2, "cached_calls") == requests == per_cell(df2, "summarize.calls")
    same = ["evidence_recall@1", "evidence_recall@3", "mrr", "summarize.prompt_tokens", "memory_tokens"]
    pd.testing.assert_frame_equal(stable(df1[df1.metric.isin(same)]), stable(df2[df2.metric.isin(same)]))


def test_a_named_judge_backend_grades_the_qa_answers(write_toml, registries, tmp_path):
    text = open(write_toml()).read().replace('summarizers = ["concat", "per_chunk"]', 'summarizers = ["concat"]')
    extra = "[qa]\nenabled = true\nmax_probes = 2\njudges = [{ prompt = \"correct_wrong_v1\", backend = \"judge\" }]\n"
    spec = ExperimentSpec.from_toml(write_toml(text, extra=extra), registries)
    judge = FakeLLM(respond=lambda msgs: "CORRECT", name="judge")
    df = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": Fake(), "judge": judge}))
    verdicts = df[df["metric"] == "judge"]
    assert len(verdicts) == 2 * 3 * 2 * 2  # 2 probes x 3 recallers x 2 chunkers x 2 conversations
    controls = df[df["metric"].isin(["judge_tpr", "judge_fpr"])]  # once per cell, on its first recaller's rows
    per_cell = controls.groupby("cell_id")["pipeline"].nunique()
    assert len(per_cell) == 4 and (per_cell == 1).all()  # 4 cells, each controlled under one recaller
    assert (verdicts["value"] == 1.0).all() and len(judge.calls) == len(verdicts) + len(controls)
    assert set(verdicts["probe_id"]) <= set(df[df["metric"] == "qa_f1"]["probe_id"])
    judge_calls = df[df["metric"] == "judge.calls"]["value"]
    assert (judge_calls == 2).all()
    assert all("Label a generated answer" in call[-1]["content"] for call in judge.calls)  # the named prompt


@pytest.mark.parametrize("scorer", ["squad", "locomo"])
def test_the_qa_scorer_is_named_in_the_spec_and_recorded_in_every_row(write_toml, registries, tmp_path,
                                                                     corpus_path, scorer):
    from lyra_lab import load
    from lyra_lab.measures import score_answer

    text = open(write_toml()).read().replace('summarizers = ["concat", "per_chunk"]', 'summarizers = ["concat"]')
    spec = ExperimentSpec.from_toml(write_toml(text, extra=f'[qa]\nenabled = true\nscorer = "{scorer}"\n'),
                                    registries)
    reply = "Biscuits, and a nurse"
    df = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": FakeLLM(respond=lambda m: reply)}))
    assert (df["qa.scorer"] == scorer).all()
    probes = {p.id: p for p in load(corpus_path).probes}
    qa = df[df["metric"] == "qa_f1"]
    assert len(qa)
    for probe_id, value in zip(qa["probe_id"], qa["value"]):
        assert value == pytest.approx(score_answer(probes[probe_id], reply, scorer)["qa_f1"])
    report = (tmp_path / "run" / "report")
    from lyra_lab.reports import write_report

    write_report(tmp_path / "run")
    assert f"scored with: {scorer}" in (report / "summary.md").read_text()


def test_an_unknown_qa_scorer_fails_at_spec_time(write_toml, registries):
    with pytest.raises(ConfigError, match="unknown QA scorer 'locomoo'; known: squad, locomo, longmemeval"):
        ExperimentSpec.from_toml(write_toml(extra='[qa]\nenabled = true\nscorer = "locomoo"\n'), registries)
