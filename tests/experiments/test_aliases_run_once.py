"""Pipelines that provably build the same memory (``spec.aliases``) are run once; the alias gets copied rows."""

from __future__ import annotations

import textwrap
import pandas as pd

from lyra_lab.backends import FakeLLM
from lyra_lab.reports import write_report
from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment
from lyra_lab.runs import read_log

GRID = """
name = "aliases"
[corpus]
path = "tiny.jsonl"
[grid]
chunkers = [{chunkers}]
summarizers = ["single_pass"]
recallers = ["bm25", "dense"]
[run]
backends = ["fake"]
embedders = ["hashing"]
ks = [1, 3]
cache = "off"
"""
TURN_WINDOW = '{ name = "turn_window", max_turns = 2 }'
TOKEN_BUDGET = '{ name = "token_budget", max_tokens = 40 }'
TIMING_METRICS = ("recall_latency_s", "embed.latency_s", "embed.latency_p50_s", "embed.latency_p95_s",
                  "embed.paid_latency_s", "summarize.latency_s", "summarize.latency_p50_s", "summarize.latency_p95_s",
                  "summarize.paid_latency_s")


def _spec(tmp_path, corpus_path, chunkers: str, name: str) -> ExperimentSpec:
    path = tmp_path / name
    path.write_text(textwrap.dedent(GRID.format(chunkers=chunkers)), encoding="utf-8")
    return ExperimentSpec.from_toml(path)  # lyra-lab's own registries: the real single_pass


def test_single_pass_under_two_chunkers_is_run_once_and_both_have_equal_rows(tmp_path, corpus_path):
    one = _spec(tmp_path, corpus_path, TURN_WINDOW, "one.toml")
    two = _spec(tmp_path, corpus_path, f"{TURN_WINDOW}, {TOKEN_BUDGET}", "two.toml")
    assert len(two.pipelines) == 2 and len(two.aliases) == 1

    alone, both = FakeLLM(), FakeLLM()  # FakeLLM records every call it answers in .calls
    run_experiment(one, tmp_path / "one", None, Injected(backends={"fake": alone}))
    df = run_experiment(two, tmp_path / "two", None, Injected(backends={"fake": both}))
    # tiny corpus: 2 conversations x 3 sessions, session_end trigger, one single_pass call per flush = 6 calls;
    # running the alias too made 12
    assert len(alone.calls) == 6 and len(both.calls) == 6

    labels = {p.split("|")[0] for p in df["pipeline"]}
    assert labels == {"turn_window+single_pass+none", "token_budget+single_pass+none"}
    alias = df[df["chunker"] == "token_budget"]
    source = df[df["chunker"] == "turn_window"]
    assert alias["chunker.max_tokens"].eq(40).all() and alias["chunker.max_turns"].isna().all()
    assert source["chunker.max_turns"].eq(2).all()
    assert set(alias["cell_id"]).isdisjoint(source["cell_id"]) and alias["cell_id"].nunique() == 2

    key = ["conversation_id", "recaller", "probe_id", "metric"]
    a = alias.set_index(key)["value"].sort_index()
    s = source.set_index(key)["value"].sort_index()
    quality = [m for m in s.index.get_level_values("metric").unique() if m not in TIMING_METRICS]
    assert {"evidence_recall@3", "mrr", "retention"} <= set(quality)
    pd.testing.assert_series_equal(a, s)  # copied: even the timing values are the source's

    events = list(read_log(tmp_path / "two" / "log.jsonl"))
    aliased = [e for e in events if e["event"] == "alias"]
    assert len(aliased) == 2 and {e["same_as"] for e in aliased} == set(source["cell_id"])
    assert len([e for e in events if e["event"] == "cell_started"]) == 2

    write_report(tmp_path / "two", n_resamples=20)
    md = (tmp_path / "two" / "report" / "summary.md").read_text(encoding="utf-8")
    assert "run once, rows copied" in md and "run anyway" not in md


def test_alias_rows_missing_after_a_kill_are_copied_on_resume_without_calls(tmp_path, corpus_path):
    two = _spec(tmp_path, corpus_path, f"{TURN_WINDOW}, {TOKEN_BUDGET}", "two.toml")
    first = run_experiment(two, tmp_path / "run", None, Injected(backends={"fake": FakeLLM()}))
    alias_ids = sorted(first.loc[first["chunker"] == "token_budget", "cell_id"].unique())
    for cid in alias_ids:  # as if killed after the source cells landed, before the copies
        (tmp_path / "run" / "rows" / f"{cid}.jsonl").unlink()

    counting = FakeLLM()
    again = run_experiment(two, tmp_path / "run", None, Injected(backends={"fake": counting}))
    assert counting.calls == []
    cols = sorted(first.columns)
    order = ["cell_id", "pipeline", "probe_id", "metric"]
    pd.testing.assert_frame_equal(first[cols].sort_values(order).reset_index(drop=True),
                                  again[cols].sort_values(order).reset_index(drop=True))
