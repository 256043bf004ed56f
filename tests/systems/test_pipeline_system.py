"""A pipeline built live (``replay.PipelineMemory`` as the ``pipeline`` system) against the replay engine.

After the last turn, a live memory told that the conversation ended holds the
replay engine's memory, entry for entry, so every probe asked then gets the same
hits.  Between two sessions it may not: the replay engine looks one turn ahead
and has flushed the session, the live memory has not seen the next turn yet.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import lyra_lab
from lyra_lab.backends import FakeLLM, HashingEmbedder
from lyra_lab.replay import LiveSetup, Pipeline, PipelineMemory, Registries, ReplaySetup, replay
from lyra_lab.systems import PipelineSystem, as_recall_hits, run_system

SYNTHETIC = Path(__file__).resolve().parents[2] / "datasets" / "synthetic_small.jsonl"

LLM_FREE = {"chunker": {"name": "turn_window", "max_turns": 3}, "summarizer": "none", "keep_raw": False,
            "trigger": {"name": "every_turns", "n": 5}}
WITH_FAKE_LLM = {"chunker": {"name": "turn_window", "max_turns": 4}, "summarizer": {"name": "single_pass"},
                 "rollup": {"name": "summary_buffer"}, "budget": 400, "keep_raw": False}


@pytest.fixture(scope="module")
def conversation_and_probes():
    corpus = lyra_lab.load(SYNTHETIC)
    conv = corpus.conversations[0]
    probes = [dataclasses.replace(p, asked_at=None) for p in corpus.probes if p.conversation_id == conv.id]
    return conv, probes


def _fake() -> FakeLLM:
    return FakeLLM(respond=lambda messages: " ".join(messages[-1]["content"].split()[:15]))


@pytest.mark.parametrize("spec", [LLM_FREE, WITH_FAKE_LLM], ids=["llm_free", "fake_llm"])
@pytest.mark.parametrize("recaller", ["bm25", "dense"])
def test_after_the_last_turn_a_live_memory_answers_as_the_replay_engine(conversation_and_probes, spec, recaller):
    conv, probes = conversation_and_probes
    embedder = HashingEmbedder()
    system = PipelineSystem(pipeline=spec, recaller=recaller)
    pipeline, built = system.build()
    replayed = replay(conv, probes, pipeline, ReplaySetup(_fake(), embedder=embedder, recallers={"r": built}, k=5))
    run = run_system(system, conv, probes, k=5, backend=_fake(), embedder=embedder)
    assert [p.turns_seen for p in run.probes] == [len(list(conv.turns()))] * len(probes)
    for outcome, asked in zip(replayed.outcomes["r"], run.probes):
        ours = as_recall_hits(asked.hits, conv.id, "pipeline")
        assert [(h.entry.text, h.entry.turn_ids, h.entry.kind) for h in ours] == \
               [(h.entry.text, h.entry.turn_ids, h.entry.kind) for h in outcome.hits]
        assert [h.score for h in ours] == pytest.approx([h.score for h in outcome.hits], abs=1e-6)
    if spec is WITH_FAKE_LLM:
        assert run.ingest.usage.calls > 0  # the summaries and rollups were metered


def test_the_memory_itself_is_the_replay_engines_once_finished(conversation_and_probes):
    conv, _ = conversation_and_probes
    pipeline = Pipeline.from_dict(WITH_FAKE_LLM, Registries.default())
    replayed = replay(conv, [], pipeline, ReplaySetup(_fake(), recallers={}))
    live = PipelineMemory(conv.id, pipeline, LiveSetup(_fake()))
    live.extend(lyra_lab.replay.clock_order(conv))
    assert live.pending > 0  # the last window waits for a next turn that never comes ...
    live.finish()  # ... until the conversation is declared over
    assert live.store.dumps() == replayed.store.dumps()
    assert live.flushes == replayed.flushes


def test_between_sessions_a_live_memory_has_not_flushed_yet(conversation_and_probes):
    """The one difference, made explicit: the replay engine flushed the session before the next one began."""
    conv, _ = conversation_and_probes
    pipeline = Pipeline.from_dict({**LLM_FREE, "trigger": "session_end"}, Registries.default())
    first = conv.sessions[0]
    live = PipelineMemory(conv.id, pipeline, LiveSetup(_fake()))
    live.extend(first.turns)
    assert live.pending == len(first.turns)  # no look-ahead: the session may go on
    assert {e.kind for e in live.store} == {"turn"}
    live.add(conv.sessions[1].turns[0])  # the next session's first turn closes the first session
    assert live.pending == 1 and "chunk" in {e.kind for e in live.store}


def test_a_live_memory_logs_its_flushes_and_needs_a_recaller_to_be_asked(conversation_and_probes):
    conv, _ = conversation_and_probes
    pipeline = Pipeline.from_dict(WITH_FAKE_LLM, Registries.default())
    events = []

    class ListLog:
        def event(self, event, /, **fields):
            events.append((event, fields))

    live = PipelineMemory(conv.id, pipeline, LiveSetup(_fake(), log=ListLog()))
    live.extend(lyra_lab.replay.clock_order(conv))
    live.finish()
    kinds = [kind for kind, _ in events]
    assert kinds.count("summary_written") == kinds.count("rollup_report") == live.flushes > 0
    assert {fields["conversation_id"] for _, fields in events} == {conv.id}
    with pytest.raises(ValueError, match="no recaller"):
        live.recall("anything", 3)
