"""Helpers of the memory-system tests: the synthetic corpus, the example HTTP service, and the processes still
running in a folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import lyra_lab

REPO = Path(__file__).resolve().parents[2]
SYNTHETIC = REPO / "datasets" / "synthetic_small.jsonl"


def processes_in(folder: str) -> list[int]:
    """Pids of live processes whose working folder is ``folder`` (or was, before it was removed).

    A session starts its servers in its own temp folder, so whatever it started, children
    included, shows up here until it is gone (a zombie counts: its /proc entry is still there).
    """
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if cwd == folder or cwd == f"{folder} (deleted)":
            found.append(int(entry.name))
    return found


def processes_running(text: str) -> list[int]:
    """Pids of live processes (zombies aside) whose command line contains ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if text in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def processes_under(folder: str | Path) -> list[str]:
    """Live processes (zombies aside) working in ``folder`` or below, or started on a file there: whatever a
    session started whose temp folders were made in ``folder`` (``TMPDIR``), children included."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and (cwd.startswith(str(folder)) or str(folder) in cmdline):
            found.append(f"{entry.name}: {cmdline[:200]}")
    return found


@pytest.fixture(scope="session")
def synthetic():
    return lyra_lab.load(SYNTHETIC)


@pytest.fixture(scope="session")
def conversation_and_probes(synthetic):
    conv = synthetic.conversations[0]
    return conv, [p for p in synthetic.probes if p.conversation_id == conv.id]


@pytest.fixture
def example_service():
    """examples/http_memory_service.py on a free port, stopped after the test."""
    proc = subprocess.Popen([sys.executable, str(REPO / "examples" / "http_memory_service.py"), "--port", "0"],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("memory service on "), line
        yield line.split()[-1]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
