"""After SIGINT mid-run, the re-plan's calls and embeddings equal what the resumed run then makes (issue 46).

A real ``lyra-lab run`` in a subprocess: a single-pass summarizer and QA answers on a simulated server on
127.0.0.1 (it counts the requests it receives), dense recall with the real ``e5`` embedder, the response
cache in the run folder and the shared embedding cache in a user cache of the test's own.  SIGINT once
the server has answered about half the run's calls (summaries and answers are in the caches by then),
then ``lyra-lab plan --json`` of the run folder, then the same ``lyra-lab run`` again: the chat requests
the server receives during the resume, and the vectors the resume adds to the embedding cache, are the
plan's counts.  Before the plan's stand-ins carried the run's cache identities it counted every
cached answer (and the summaries and answers built on them) as still to pay.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from lyra_lab.backends import SimulatedServer

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "datasets" / "synthetic_small.jsonl"


def _cli(args: list[str], env: dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lyra_lab.cli", *args], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)


def _vectors(cache: Path) -> int:
    path = cache / "embeddings.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])


def _spec(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(textwrap.dedent(f"""
        name = "resumed"
        [corpus]
        path = "{CORPUS.as_posix()}"
        conversations = 4
        max_sessions = 3
        max_probes = 4
        [grid]
        chunkers = [{{ name = "turn_window", max_turns = 4 }}]
        summarizers = [{{ name = "single_pass", max_tokens = 24 }}]
        recallers = ["dense"]
        [run]
        backends = [{{ preset = "simulated", base_url = "{url}", max_concurrency = 1, stream = false }}]
        embedders = ["e5"]
        ks = [1, 3]
        cache = "run"
        executor = "serial"
        [qa]
        enabled = true
        max_tokens = 8
        """), encoding="utf-8")
    return path


def _plan(spec: Path, run_dir: Path, env: dict[str, str]) -> tuple[int, int]:
    """The plan's LLM calls (exact: low = high) and texts to embed."""
    done = _cli(["plan", str(spec), "--run-dir", str(run_dir), "--json"], env)
    assert done.returncode == 0, done.stderr[-2000:]
    forecast = json.loads(done.stdout)
    calls = [tuple(b["calls"]) for b in forecast["backends"]]
    assert all(low == high for low, high in calls), calls  # call counts do not depend on what a model writes
    return int(sum(low for low, _ in calls)), int(sum(e["to_embed"] for e in forecast["embedders"]))


def test_the_re_plan_after_sigint_counts_what_the_resume_then_pays(tmp_path, monkeypatch):
    cache = tmp_path / "user-cache"
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(cache))  # the server's registration where the runs look for it
    env = {**os.environ, "LYRA_LAB_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1",
           "COLUMNS": "100"}
    with SimulatedServer(latency_s=0.1, default_max_tokens=12, seed=3) as server:
        spec, run_dir = _spec(tmp_path, server.base_url), tmp_path / "run"
        fresh_calls, fresh_texts = _plan(spec, run_dir, env)  # calibrates the server once (kept rates after)
        assert fresh_calls >= 10 and fresh_texts >= 10
        before = len(server.chat_log())
        child = subprocess.Popen([sys.executable, "-m", "lyra_lab.cli", "run", str(spec), "--run-dir", str(run_dir),
                                  "--yes"], env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 200
        while len(server.chat_log()) - before < fresh_calls // 2 and child.poll() is None:
            assert time.monotonic() < deadline, "the run made too few calls in 200 s"
            time.sleep(0.02)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=120)
        assert child.returncode == 130, err[-2000:]
        assert "run the same command to resume" in err
        paid = len(server.chat_log()) - before
        assert 0 < paid < fresh_calls and _vectors(cache) > 0  # answers and vectors were kept

        calls, texts = _plan(spec, run_dir, env)
        assert 0 < calls < fresh_calls and 0 < texts < fresh_texts  # the kept work is counted as done

        start, vectors = len(server.chat_log()), _vectors(cache)
        done = _cli(["run", str(spec), "--run-dir", str(run_dir), "--yes"], env)
        assert done.returncode == 0, done.stderr[-2000:]
        made, embedded = len(server.chat_log()) - start, _vectors(cache) - vectors
    assert (calls, texts) == (made, embedded), f"planned {calls} calls, {texts} texts; made {made}, embedded {embedded}"
