"""The run log records the summarizers' progress (per chunk, merge, complete) and the progress bar shows it."""

from __future__ import annotations

import textwrap
from collections import defaultdict

from lyra_lab.backends import FakeLLM
from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment
from lyra_lab.experiments.cells._run import _progress_postfix
from lyra_lab.runs import read_log

MAP_REDUCE_GRID = """
name = "progress"
[corpus]
path = "tiny.jsonl"
[grid]
chunkers = [{ name = "turn_window", max_turns = 2 }]
summarizers = [{ name = "map_reduce", max_tokens = 16, merge_max_tokens = 16, max_concurrency = 1 }]
recallers = ["bm25"]
[run]
backends = ["fake"]
embedders = ["hashing"]
ks = [1]
"""

# map_reduce over a window of 4 turns cut into 2-turn chunks: two chunk calls, then the merge
STAGES = [("load", None, 2), ("strategy", None, 2), ("chunk_done", 1, 2), ("chunk_done", 2, 2),
          ("merge_started", None, 2), ("merge_done", None, None), ("complete", None, None)]


def test_a_map_reduce_run_writes_its_per_part_events_to_the_log(tmp_path, corpus_path):
    path = tmp_path / "progress.toml"
    path.write_text(textwrap.dedent(MAP_REDUCE_GRID), encoding="utf-8")
    llm = FakeLLM()
    df = run_experiment(ExperimentSpec.from_toml(path), tmp_path / "run", None, Injected(backends={"fake": llm}))
    events = list(read_log(tmp_path / "run" / "log.jsonl"))
    progress = defaultdict(list)  # (cell, flush) -> its summarizer events, in order
    for e in events:
        if e["event"] == "summarize_progress":
            progress[(e["cell_id"], e["flush"])].append(e)
    flushes = {(e["cell_id"], e["flush"]) for e in events if e["event"] == "summary_written"}
    # the tiny corpus: 2 conversations x 3 sessions of 4 turns, one flush per session
    assert len(flushes) == 6 and set(progress) == flushes
    for parts in progress.values():
        assert [(e["stage"], e["i"], e["n"]) for e in parts] == STAGES
        assert all(e["ok"] for e in parts if e["stage"] in ("chunk_done", "merge_done", "complete"))
        assert parts[1]["detail"]["summarizer"] == "map_reduce" and parts[-1]["detail"]["calls"] == 3
        assert {e["conversation_id"] for e in parts} <= set(df["conversation_id"])
    calls = [e for e in events if e["event"] == "llm_call"]
    # 3 calls per flush; the two conversations share some chunks word for word (the response cache answers those)
    assert len(calls) == 6 * 3 and len(llm.calls) == sum(not e["cached"] for e in calls)


def test_the_bar_postfix_names_the_flush_and_the_part():
    assert _progress_postfix({"flush": 3, "stage": "chunk_done", "i": 2, "n": 5}) == "flush 3 · chunk 2/5"
    assert _progress_postfix({"flush": 0, "stage": "merge_started", "i": None, "n": 5}) == "flush 0 · merge started"


def test_replay_hands_the_summarizer_events_to_on_event(tmp_path):
    from lyra_lab.chunking import CHUNKERS
    from lyra_lab.replay import Pipeline, ReplaySetup, replay
    from lyra_lab.summarize import SUMMARIZERS

    from tests.experiments.conftest import tiny_corpus

    corpus = tiny_corpus(conversations=1, sessions=2)
    conv = corpus.conversations[0]
    pipeline = Pipeline(chunker=CHUNKERS.build({"name": "turn_window", "max_turns": 2}),
                        summarizer=SUMMARIZERS.build({"name": "map_reduce", "max_concurrency": 1}))
    seen = []
    replay(conv, corpus.probes_for(conv.id), pipeline, ReplaySetup(FakeLLM(), on_event=lambda kind, fields: seen.append((kind, fields))))
    parts = [(f["flush"], f["stage"], f["i"]) for kind, f in seen if kind == "summarize_progress"]
    assert [p for p in parts if p[1] == "chunk_done"] == [(0, "chunk_done", 1), (0, "chunk_done", 2),
                                                          (1, "chunk_done", 1), (1, "chunk_done", 2)]
    assert sum(p[1] == "complete" for p in parts) == 2
