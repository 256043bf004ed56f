"""The ``served`` system: a lyra-lab pipeline in a ``lyra-lab serve-memory`` process of its own, over MCP and
HTTP, gives the in-process pipeline's hits and contents; it fails with one line naming itself and leaves no
process behind.  Also what every session lists as its contents (``contents()``)."""

from __future__ import annotations

import pytest

from lyra_lab.backends import HashingEmbedder
from lyra_lab.systems import (McpSystem, Mem0System, MemorySystemError, PipelineSystem, ServedSystem,
                              SystemReplay, run_system)
from tests.systems.conftest import processes_in, processes_running

PIPELINE = {"chunker": {"name": "turn_window", "max_turns": 2}, "keep_raw": False}


@pytest.mark.parametrize("via", ["http", "mcp"])
def test_a_served_pipeline_answers_as_the_pipeline_in_process(conversation_and_probes, via):
    conv, probes = conversation_and_probes
    served = ServedSystem(via=via, pipeline=PIPELINE, recaller="bm25")
    assert served.label() == f"served-{via}:turn_window+bm25" and not served.needs().backend
    here = PipelineSystem(pipeline=PIPELINE, recaller="bm25")
    inside = run_system(here, conv, probes[:6], k=7)
    workdirs = []
    run = SystemReplay(served, conv, probes[:6], k=7)
    listed = []
    for asked in run:
        workdirs.append(run.session.workdir)  # type: ignore[union-attr]
        listed.append(run.session.contents())  # type: ignore[union-attr]
    assert [a.hits for a in run.result.probes] == [a.hits for a in inside.probes]
    assert run.result.ingest.items == inside.ingest.items
    with here.open(conv.id, None, None) as session:  # what the in-process memory holds once every turn is in
        session.ingest(list(conv.turns()), final=True)
        assert sorted(listed[-1], key=lambda h: h.id) == sorted(session.contents(), key=lambda h: h.id)
    assert len(listed[-1]) == len(list(conv.turns())) // 2  # chunks of two turns replaced the turns
    turns = {t.id: t for t in conv.turns()}
    spans = [(h.when, h.until) for h in listed[-1]]
    assert spans == [(turns[h.turn_ids[0]].timestamp, None if turns[h.turn_ids[-1]].timestamp == h.when
                      else turns[h.turn_ids[-1]].timestamp) for h in listed[-1]]  # a chunk's span, both ends
    assert not processes_in(workdirs[0]) and not processes_running(workdirs[0])  # serve-memory ran on its config


def test_a_served_pipeline_that_cannot_start_fails_at_open_with_one_line(conversation_and_probes):
    conv, _ = conversation_and_probes
    system = ServedSystem(via="http", recaller="dense", embedder="no-such-embedder", start_timeout_s=60)
    with pytest.raises(MemorySystemError) as caught:
        system.open(conv.id, None, None)
    message = str(caught.value)
    assert message.startswith("memory system 'served-http:turn_window+dense': open failed: ") and "\n" not in message
    assert "exited with code" in message and "no-such-embedder" in message, message


def test_every_session_lists_what_it_holds(conversation_and_probes):
    conv, _ = conversation_and_probes
    turns = list(conv.turns())[:5]
    for system in (McpSystem(), Mem0System(), PipelineSystem()):
        with system.open(conv.id, None, HashingEmbedder()) as session:
            assert session.contents() == []
            session.ingest(turns, final=True)
            items = session.contents()
        assert items is not None
        texts = sorted(h.text for h in items if h.kind == "turn")
        assert texts == sorted(f"{t.speaker}: {t.text}" for t in turns), system.label()
        assert {tid for h in items for tid in h.turn_ids} == {t.id for t in turns}
    with McpSystem(list_tool="").open(conv.id, None, None) as session:
        assert session.contents() is None  # a server without a listing tool: the memory cannot be listed
