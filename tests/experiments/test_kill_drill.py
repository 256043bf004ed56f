"""Kill drill: kill -9 a summarizing grid at random points and resume; nothing lost, nothing paid twice.

The grid (single_pass and map_reduce over synthetic sessions) runs as a child
process against a simulated server in this process, which counts every LLM
request. Each kill lands mid-run after a random number of requests; the next
child resumes the same run folder, whose response cache answers every call
already paid. The short drill (2 kills) runs in the suite; the long one
(5 kills) with ``pytest -m soak``.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from lyra_lab.backends import SimulatedServer
from lyra_lab.corpus import generate_synthetic
from lyra_lab.experiments import ExperimentSpec, run_experiment
from lyra_lab.replay import read_log

ROOT = Path(__file__).resolve().parents[2]
CHILD = ("import sys; from lyra_lab.experiments import run_experiment; "
         "run_experiment(sys.argv[1], sys.argv[2], progress=False)")


def drill_toml(folder: Path, base_url: str, conversations: int, sessions: int) -> Path:
    corpus = generate_synthetic(0, conversations=conversations, months=max(1, sessions // 20 + 1),
                                sessions=sessions, single_facts=4, updated_facts=1, temporal=2, multi_hop=1,
                                abstention=2).save(folder / "drill.jsonl")
    # map_reduce one chunk call at a time: at most one request is in flight when the child dies
    map_reduce = '{ name = "map_reduce", max_tokens = 16, merge_max_tokens = 24, max_concurrency = 1 }'
    text = textwrap.dedent(f"""
        name = "drill"
        [corpus]
        path = "{corpus}"
        [grid]
        chunkers = [{{ name = "turn_window", max_turns = 4 }}]
        summarizers = [{{ name = "single_pass", max_tokens = 24 }}, {map_reduce}]
        recallers = ["bm25"]
        [run]
        backends = [{{ preset = "simulated", base_url = "{base_url}", max_concurrency = 1 }}]
        embedders = ["hashing"]
        ks = [1, 5]
        cache = "run"
        """)
    path = folder / "drill.toml"
    path.write_text(text, encoding="utf-8")
    return path


def stable(df: pd.DataFrame) -> pd.DataFrame:
    # Timing differs run to run; cached_calls, <phase>.cached_calls and <phase>.paid_* count what this
    # attempt took from the cache or paid, which a resume changes by design.
    paid = df["metric"].str.contains("latency") | df["metric"].str.endswith("cached_calls") \
        | df["metric"].str.contains(r"\.paid_")
    keep = df[~paid]
    return keep.sort_values(["cell_id", "pipeline", "probe_id", "metric"]).reset_index(drop=True)


def _drill(tmp_path: Path, kills: int, conversations: int, sessions: int, seed: int) -> None:
    with SimulatedServer(latency_s=0.01) as server:
        toml = drill_toml(tmp_path, server.base_url, conversations, sessions)
        spec = ExperimentSpec.from_toml(toml)
        reference = run_experiment(spec, tmp_path / "reference", progress=False)
        paid_once = server.request_count  # the uninterrupted run: every distinct prompt once

        rng = random.Random(seed)
        # kill after these many requests of the drill (cumulative), spread over its first 80%
        points = sorted(rng.sample(range(2, int(paid_once * 0.8)), kills))
        run = tmp_path / "run"
        env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
        start = server.request_count
        for point in points:
            child = subprocess.Popen([sys.executable, "-c", CHILD, str(toml), str(run)], env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            deadline = time.monotonic() + 120
            try:
                while (server.request_count - start < point and child.poll() is None
                       and time.monotonic() < deadline):
                    time.sleep(0.002)
                ended = child.poll() is not None
                assert not ended, f"child ended before the kill: {child.stderr.read().decode()[-2000:]}"
                os.kill(child.pid, signal.SIGKILL)
            finally:
                child.wait(timeout=30)
                child.stderr.close()
            assert child.returncode == -signal.SIGKILL
        resumed = run_experiment(spec, run, progress=False)
        paid = server.request_count - start

    assert resumed.attrs["failed_cells"] == []
    pd.testing.assert_frame_equal(stable(resumed), stable(reference))
    assert not resumed.duplicated(["cell_id", "pipeline", "probe_id", "metric"]).any()
    events = [e["event"] for e in read_log(run / "log.jsonl")]  # still parseable after every kill
    assert events.count("cell_done") == reference["cell_id"].nunique()
    # No call paid twice: the drill made the reference's requests, plus at most one in flight at each kill
    # (answered by the server, never received by the killed child, so never cached).
    assert paid_once <= paid <= paid_once + kills, (paid, paid_once, points)


def test_short_kill_drill_two_kills(tmp_path):
    _drill(tmp_path, kills=2, conversations=2, sessions=10, seed=0)


@pytest.mark.soak
def test_long_kill_drill_five_kills(tmp_path):
    _drill(tmp_path, kills=5, conversations=3, sessions=30, seed=1)
