"""Every memory system lyra-lab ships keeps the contract (``lyra_lab.testing.check_system_contract``): at most k
hits, none twice, an empty memory answered, the same answers from two fresh memories.  The external ones run
for real (the example HTTP service, the reference MCP server through npx, mem0 offline, lyra-lab's own
pipeline served in a process of its own) and leave no process behind; each skips, saying why, where what it
needs is missing.  Example counts are small: each case of a process-starting system starts it twice, so those
run the fixed case alone (``fixed_case``: every query matches more turns than its k)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Callable

import pytest

from lyra_lab.backends import HashingEmbedder
from lyra_lab.experiments.cells._system_stand_in import DeclaredSystem
from lyra_lab.systems import (SYSTEMS, HttpSystem, McpSystem, Mem0System, MemorySystem, PipelineSystem,
                              ServedSystem)
from lyra_lab.systems._node import resolve_command
from lyra_lab.testing import check_system_contract
from tests.systems.conftest import processes_under

PIPE = {"chunker": {"name": "turn_window", "max_turns": 2}, "keep_raw": False}


def _needs_npx() -> None:
    try:
        resolve_command(["npx"], {})
    except FileNotFoundError as exc:
        pytest.skip(f"the reference MCP memory server needs npx: {exc}")


def _needs_mcp() -> None:
    pytest.importorskip("mcp", reason="the MCP client library is not installed (the mcp package)")


def _needs_mem0() -> None:
    pytest.importorskip("mem0", reason="mem0 is not installed (the mem0ai package)")


def _http(request: pytest.FixtureRequest) -> MemorySystem:
    return HttpSystem(url=request.getfixturevalue("example_service"), batch=3)


def _mcp(request: pytest.FixtureRequest) -> MemorySystem:
    _needs_mcp()
    _needs_npx()
    return McpSystem()


def _served_mcp(request: pytest.FixtureRequest) -> MemorySystem:
    _needs_mcp()
    return ServedSystem(via="mcp", pipeline=PIPE, recaller="bm25")


def _mem0(request: pytest.FixtureRequest) -> MemorySystem:
    _needs_mem0()
    return Mem0System()


#: Per case: what builds the system, whether it embeds, and how many drawn examples follow the fixed case
#: (each case opens two fresh memories).
CASES: dict[str, tuple[Callable[[pytest.FixtureRequest], MemorySystem], bool, int]] = {
    "pipeline": (lambda request: PipelineSystem(), False, 10),
    "pipeline-hybrid": (lambda request: PipelineSystem(pipeline=PIPE, recaller="hybrid"), True, 10),
    "stand-in": (lambda request: DeclaredSystem.of(Mem0System(), "low"), True, 10),
    "http": (_http, False, 6),
    "mem0": (_mem0, True, 1),
    # a process (npx and node, or lyra-lab serve-memory) per memory, seconds each: the fixed case alone
    "mcp": (_mcp, False, 0),
    "served": (lambda request: ServedSystem(via="http", pipeline=PIPE, recaller="bm25"), False, 0),
    "served-mcp": (_served_mcp, False, 0),
}


def test_every_registered_system_has_a_contract_case():
    assert set(SYSTEMS.names()) <= set(CASES), set(SYSTEMS.names()) - set(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_shipped_system_keeps_the_contract(case, request, tmp_path, monkeypatch):
    build, embeds, examples = CASES[case]
    temp = Path(tmp_path, "tmp")
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # every session's folder, where its processes run
    system = build(request)
    check_system_contract(system, embedder=HashingEmbedder() if embeds else None, deterministic=True,
                          max_examples=examples)
    assert not processes_under(temp), processes_under(temp)
