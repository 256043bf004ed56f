"""mem0 (the real library, offline) as a memory system: raw turns with lyra-lab's embedder through its
OpenAI-compatible endpoint, and fact extraction through a fake LLM that answers JSON, garbage or errors.
The bundled local model's fact extraction is in test_mem0_local.py (slow)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
from pathlib import Path

import httpx
import pytest

from lyra_lab.backends import FakeLLM, HashingEmbedder
from lyra_lab.systems import Mem0System, MemorySystemError, as_recall_hits, run_system


class KindRecorder(HashingEmbedder):
    """The hashing embedder, remembering the kind of each call and the passages it embedded."""

    def __init__(self):
        super().__init__()
        self.kinds: list[str] = []
        self.passages: list[str] = []

    def embed(self, texts, kind="passage"):
        self.kinds.append(kind)
        if kind == "passage":
            self.passages.extend(texts)
        return super().embed(texts, kind)


def test_raw_turns_traced_dated_and_on_the_replay_clock(conversation_and_probes):
    conv, probes = conversation_and_probes
    middle = conv.sessions[len(conv.sessions) // 2].turns[0].timestamp
    probes = [dataclasses.replace(p, asked_at=middle) if i % 2 else p for i, p in enumerate(probes)]
    embedder = KindRecorder()
    run = run_system(Mem0System(), conv, probes, k=5, embedder=embedder)
    assert run.system == "mem0:raw"
    turns = {t.id: t for t in conv.turns()}
    assert run.ingest.items == run.ingest.turns == len(turns) and run.ingest.usage.calls == 0
    # each stored turn embedded once, through the endpoint, the turns of an ingest in one request (mem0
    # asks for one text a request; an ingest is the turns said since the last probe, at most 100 a batch)
    # (a text said twice within one ingest is embedded once: both adds take its vector)
    assert set(embedder.passages) == {f"{t.speaker}: {t.text}" for t in turns.values()}
    assert len(embedder.passages) <= len(turns)
    assert run.ingest.embed_calls == embedder.kinds.count("passage") <= len(probes) + 1 + len(turns) // 100
    found = 0
    for asked in run.probes:
        assert len(asked.hits) == 5
        for hit in asked.hits:
            [turn_id] = hit.turn_ids
            turn = turns[turn_id]
            assert hit.kind == "turn" and hit.text == f"{turn.speaker}: {turn.text}" and hit.when == turn.timestamp
            assert turn.timestamp < asked.now
        found += bool(set(asked.probe.evidence) & {t for h in asked.hits for t in h.turn_ids})
    assert found > 0
    assert embedder.kinds.count("query") == len(probes)  # searches embed as queries, stores as passages
    hits = as_recall_hits(run.probes[0].hits, conv.id, run.system)
    assert hits[0].entry.kind == "turn" and hits[0].entry.start == run.probes[0].hits[0].when


def test_a_session_keeps_to_itself_and_leaves_nothing(conversation_and_probes):
    import mem0.memory.telemetry as telemetry

    conv, _ = conversation_and_probes
    with Mem0System().open(conv.id, None, HashingEmbedder()) as session:
        workdir, url = session.workdir, session.endpoint.base_url
        session.ingest(list(conv.turns())[:3])
        assert Path(workdir, "qdrant").is_dir() and Path(workdir, "history.db").is_file()
        assert httpx.post(f"{url}/embeddings", json={"input": ["x"], "model": "m"}).status_code == 200
    assert telemetry.MEM0_TELEMETRY is False
    assert os.environ["MEM0_DIR"].startswith(os.environ["LYRA_LAB_CACHE_DIR"])  # not the home folder
    assert not Path(workdir).exists()
    with pytest.raises(httpx.ConnectError):
        httpx.post(f"{url}/embeddings", json={"input": ["x"]}, timeout=2)
    with Mem0System().open(conv.id, None, HashingEmbedder()) as fresh:
        assert fresh.query("hello", 5) == []  # a fresh memory per session


def _facts():
    """A fake extractor: one numbered fact per call, as the JSON mem0 asks for."""
    calls = itertools.count(1)
    return lambda messages: json.dumps({"memory": [{"text": f"Fact: number {next(calls)}"}]})


def test_fact_extraction_through_the_cells_backend(conversation_and_probes):
    conv, probes = conversation_and_probes
    backend = FakeLLM(respond=_facts())
    turns = list(conv.turns())[:8]
    with Mem0System(infer=True, batch=2).open(conv.id, backend, HashingEmbedder()) as session:
        report = session.ingest(turns)
        hits = session.query(probes[0].question, 10)
    assert report.usage.calls == len(backend.calls) == 4  # one extraction per batch of 2, metered
    assert report.items == 4 and report.bad_outputs == 0 and report.failed_calls == 0
    assert all(h.kind == "fact" and h.text.startswith("Fact: ") for h in hits)
    batches = {tuple(t.id for t in turns[i:i + 2]) for i in range(0, 8, 2)}
    assert {h.turn_ids for h in hits} <= batches  # a fact covers the turns it came from
    assert backend.calls[0][0]["role"] == "system" and "memory" in backend.calls[0][0]["content"].lower()
    assert as_recall_hits(hits, conv.id, "mem0:infer")[0].entry.kind == "fact"


@pytest.mark.parametrize("reply, failing", [("I am a tiny model and this is not JSON", False), ("", True),
                                            ('{"memory": ["Mel paints"]}', False)])  # JSON mem0 raises on
def test_a_model_that_cannot_extract_is_counted_not_a_crash(conversation_and_probes, reply, failing):
    conv, _ = conversation_and_probes
    backend = FakeLLM(respond=lambda messages: reply, fail=(lambda messages: True) if failing else None)
    with Mem0System(infer=True, batch=2).open(conv.id, backend, HashingEmbedder()) as session:
        report = session.ingest(list(conv.turns())[:6])
        assert session.query("anything", 5) == []
    assert report.items == 0 and report.turns == 6
    if failing:
        assert report.failed_calls == 3 and report.usage.calls == 0
        assert "injected failure (FakeLLM)" in report.notes[0]
    else:  # answered, but nothing mem0 could store: bad outputs, not failed calls
        assert report.bad_outputs == 3 and report.failed_calls == 0 and report.usage.calls == 3
        if reply.startswith("{"):
            assert any(note.startswith("AttributeError") for note in report.notes), report.notes


def test_what_mem0_needs_is_said_at_open(monkeypatch):
    with pytest.raises(MemorySystemError, match="'mem0:raw': open failed: mem0 needs an embedder"):
        Mem0System().open("c", None, None)
    with pytest.raises(MemorySystemError, match="'mem0:infer': open failed: .* needs a backend"):
        Mem0System(infer=True).open("c", None, HashingEmbedder())
    monkeypatch.setenv("OPENROUTER_API_KEY", "x")
    with pytest.raises(MemorySystemError, match="OPENROUTER_API_KEY is set"):
        Mem0System().open("c", None, HashingEmbedder())
