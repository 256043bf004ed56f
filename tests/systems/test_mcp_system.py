"""The ``mcp`` system against real server processes: the reference knowledge-graph memory server
(``npx -y @modelcontextprotocol/server-memory``), lyra-lab's own pipeline served by ``lyra-lab
serve-memory --mcp``, and a fake server that hangs, crashes or answers garbage.  Every process a
session started is gone after it closes, after a failure and after Ctrl-C."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lyra_lab.backends import HashingEmbedder
from lyra_lab.systems import (McpSystem, MemorySystemError, PipelineSystem, run_system, served_pipeline_mcp)
from tests.systems.conftest import REPO, processes_in

FAKE = Path(__file__).with_name("fake_mcp_server.py")


def fake_system(mode: str, tag: str = "", **fields) -> McpSystem:
    """The fake MCP server in ``mode``; ``tag`` (an extra argument it ignores) tells this test's processes from others'."""
    return McpSystem(command=(sys.executable, str(FAKE), mode, *([tag] if tag else [])), env=(), server_name="fake", store_tool="store",
                     store_arguments={"turn_id": "{turn_id}", "text": "{speaker}: {text}"}, search_tool="search",
                     search_arguments={"query": "{query}"}, results="items", text_field="text",
                     turn_ids_field="id", id_field="id", when_field="", **fields)


def test_the_reference_memory_server_over_npx(conversation_and_probes):
    conv, probes = conversation_and_probes
    middle = conv.sessions[len(conv.sessions) // 2].turns[0].timestamp
    probes = [dataclasses.replace(p, asked_at=middle) if i % 2 else p for i, p in enumerate(probes)]
    system = McpSystem()
    assert system.label() == "mcp:server-memory"
    with system.open(conv.id, None, None) as session:
        workdir = session.workdir
        assert processes_in(workdir)  # npx and node run in the session's folder
        report = session.ingest(list(conv.turns())[:4])
        assert report.items == 4 and report.failed_calls == 0
        assert Path(workdir, "memory.jsonl").exists()  # MEMORY_FILE_PATH: the graph is the session's own
        [hit] = session.query("Did I say hello?", 3)[:1] or [None]
    assert hit is not None and hit.kind == "turn" and hit.turn_ids[0].startswith(conv.id)
    assert not processes_in(workdir) and not Path(workdir).exists()

    run = run_system(system, conv, probes, k=5)
    turns = {t.id: t for t in conv.turns()}
    found = 0
    for asked in run.probes:
        for hit in asked.hits:
            [turn_id] = hit.turn_ids
            turn = turns[turn_id]
            assert hit.text == f"{turn.speaker}: {turn.text}" and hit.when == turn.timestamp  # verbatim, dated
            assert turn.timestamp < asked.now  # nothing said after the question
        found += bool(set(asked.probe.evidence) & {t for h in asked.hits for t in h.turn_ids})
    assert run.ingest.items == run.ingest.turns == len(turns)
    assert found >= len(probes) // 4, found  # word search finds evidence for a fair share of the probes


def test_a_pipeline_served_over_mcp_gives_the_in_process_hits(conversation_and_probes, tmp_path):
    conv, probes = conversation_and_probes
    config = tmp_path / "serve.toml"
    config.write_text(textwrap.dedent("""
        backend = "fake"
        embedder = "hashing"
        recaller = "hybrid"
        [pipeline]
        chunker = {name = "turn_window", max_turns = 3}
        summarizer = "single_pass"
        keep_raw = false
    """), encoding="utf-8")
    system = PipelineSystem(pipeline={"chunker": {"name": "turn_window", "max_turns": 3},
                                      "summarizer": "single_pass", "keep_raw": False}, recaller="hybrid")
    from lyra_lab.backends import FakeLLM

    here = run_system(system, conv, probes[:10], k=6, backend=FakeLLM(), embedder=HashingEmbedder())
    served = served_pipeline_mcp([sys.executable, "-m", "lyra_lab.cli", "serve-memory", str(config), "--mcp"],
                                 env=(f"PYTHONPATH={REPO}",))
    over_mcp = run_system(served, conv, probes[:10], k=6)
    assert [a.hits for a in over_mcp.probes] == [a.hits for a in here.probes]
    assert over_mcp.ingest.usage == here.ingest.usage and over_mcp.ingest.items == here.ingest.items
    assert here.ingest.usage.calls > 0


@pytest.mark.parametrize("mode, call, words", [
    ("hang", "query", "search: no answer within 1 s"),
    ("garbage", "query", "the answer has no list at 'items': not JSON"),
    ("crash", "query", "search: "),
    ("no_start", "open", "no answer to initialize within 2 s"),
])
def test_a_faulty_server_fails_its_session_with_one_line_and_leaves_no_process(conversation_and_probes, mode,
                                                                                call, words, tmp_path):
    conv, _ = conversation_and_probes
    # a server that starts is given time to (a loaded 2-core box can take seconds); one that never answers, 2 s
    system = fake_system(mode, str(tmp_path), timeout_s=1.0, start_timeout_s=2.0 if mode == "no_start" else 60.0)
    seen: list[str] = []
    original = McpSystem.open

    def remember_workdir(self, *args):
        session = original(self, *args)
        seen.append(session.workdir)
        return session

    started = time.monotonic()
    with pytest.raises(MemorySystemError) as caught:
        McpSystem.open = remember_workdir  # type: ignore[method-assign]
        try:
            with system.open(conv.id, None, None) as session:
                session.ingest(list(conv.turns())[:3])
                session.query("hello", 3)
        finally:
            McpSystem.open = original  # type: ignore[method-assign]
    message = str(caught.value)
    assert "\n" not in message and caught.value.call == call and words in message, message
    assert message.startswith(f"memory system 'mcp:fake': {call} failed: ")
    assert time.monotonic() - started < 20
    for workdir in seen:
        assert not processes_in(workdir), "a server process (or its child) outlived the session"
    leftovers = [p for p in _fake_servers() if f"{FAKE} {mode} {tmp_path}" in _cmdline(p)]  # this test's only
    assert not leftovers


def test_a_store_the_server_refuses_is_counted_not_hidden(conversation_and_probes):
    conv, _ = conversation_and_probes
    with fake_system("refuse").open(conv.id, None, None) as session:
        report = session.ingest(list(conv.turns())[:3])
    assert (report.items, report.failed_calls) == (0, 3)
    assert report.notes and "the store is full" in report.notes[0]


CTRL_C_CHILD = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from tests.systems.test_mcp_system import fake_system
import lyra_lab

conv = lyra_lab.load(sys.argv[1]).conversations[0]
try:
    with fake_system("hang", timeout_s=600.0).open(conv.id, None, None) as session:
        session.ingest(list(conv.turns())[:2])
        print(session.workdir, flush=True)
        session.query("anything", 3)  # hangs until Ctrl-C
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


def test_ctrl_c_stops_the_server_it_started(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CTRL_C_CHILD, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    child = subprocess.Popen([sys.executable, str(script), str(REPO / "datasets" / "synthetic_small.jsonl")],
                             stdout=subprocess.PIPE, text=True, env=env, cwd=REPO)
    try:
        workdir = child.stdout.readline().strip()
        assert workdir and processes_in(workdir)  # the server and its child are up
        time.sleep(0.5)  # in the hanging query
        os.kill(child.pid, signal.SIGINT)
        out, _ = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130 and "interrupted" in out
    assert not processes_in(workdir) and not Path(workdir).exists()


def _fake_servers() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and str(FAKE) in _cmdline(int(p.name))]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
