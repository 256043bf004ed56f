"""Kill drill: kill -9 a summarizing grid at random points and resume; nothing lost, nothing paid twice.

The grid (single_pass and map_reduce over synthetic sessions) runs as a child
process against a simulated server in this process, which counts every LLM
request. Each kill lands mid-run, after a random number of requests and while
the server is still answering one of the child's requests; the next child
resumes the same run folder, whose response cache answers every call already
paid. The short drill (2 kills) runs in the suite; the long one (5 kills) with
``pytest -m soak``.

The honest bound. The response cache is write-through: a completion is stored
(committed to SQLite) before the caller gets it, so a killed child loses only
answers it had not received yet. The child makes one call at a time (backend
and map_reduce concurrency 1, one summarizing window), so when the server
holds an open request of the child, every earlier answer is already cached.
What a kill can cost is therefore exactly the requests in flight at that
moment, counted from the server (open when the kill was decided, or arriving
after): the server answers them, nobody stores the answer, and the resumed
run asks again. The drill checks, per kill, that the requests the server
received minus the answers that reached the cache ("lost") are at most those in
flight; over the drill, that the server received the uninterrupted run's
requests plus exactly the lost ones; that the cache ends with one answer per
distinct prompt; and, in the final attempt, that every call either hit the
cache or was paid once (the run log's ``llm_call`` events). It prints the
per-kill counts and the cache hits.
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

from lyra_lab.backends import ResponseCache, SimulatedServer
from lyra_lab.synthetic import generate_synthetic
from lyra_lab.experiments import ExperimentSpec, run_experiment
from lyra_lab.runs import read_log

ROOT = Path(__file__).resolve().parents[2]
CHILD = ("import sys; from lyra_lab.experiments import run_experiment; "
         "run_experiment(sys.argv[1], sys.argv[2])")


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
    keep = df[~paid].drop(columns=["attempt"])  # the attempt that wrote a row differs by design
    return keep.sort_values(["cell_id", "pipeline", "probe_id", "metric"]).reset_index(drop=True)


def _cached(run: Path) -> int:
    path = run / "cache" / "responses.sqlite"
    if not path.exists():
        return 0
    with ResponseCache(path) as cache:
        return len(cache)


def _kill_while_a_request_is_open(server: SimulatedServer, child: subprocess.Popen, first: int,
                                  point: int) -> int:
    """Wait for ``point`` requests of this child and one still being answered; kill -9; return those in flight."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        log = server.chat_log()[first:]
        if len(log) >= point and any(r.finished is None for r in log):
            break
        time.sleep(0.002)
    assert child.poll() is None, f"child ended before the kill: {child.stderr.read().decode()[-2000:]}"
    snapshot = {r.index: r.finished for r in server.chat_log()[first:]}
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    # in flight: open when the kill was decided, or sent after that
    return sum(1 for r in server.chat_log()[first:] if r.index not in snapshot or snapshot[r.index] is None)


def _attempts(events: list[dict]) -> list[list[dict]]:
    """The run log cut at each ``run_started``: one list of events per attempt."""
    out: list[list[dict]] = []
    for e in events:
        if e["event"] == "run_started":
            out.append([])
        if out:
            out[-1].append(e)
    return out


def _drill(tmp_path: Path, kills: int, conversations: int, sessions: int, seed: int) -> None:
    with SimulatedServer(latency_s=0.01) as server:
        toml = drill_toml(tmp_path, server.base_url, conversations, sessions)
        spec = ExperimentSpec.from_toml(toml)
        reference = run_experiment(spec, tmp_path / "reference")
        paid_once = len(server.chat_log())  # the uninterrupted run: every distinct prompt once

        rng = random.Random(seed)
        # kill after these many requests of each attempt, spread over the first 80% of the work
        points = sorted(rng.sample(range(2, int(paid_once * 0.8)), kills))
        run = tmp_path / "run"
        env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
        start = len(server.chat_log())
        kills_seen = []  # (received, stored, lost, in flight) per kill
        for point, already in zip(points, [0, *points]):
            first = len(server.chat_log())
            before = _cached(run)
            child = subprocess.Popen([sys.executable, "-c", CHILD, str(toml), str(run)], env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            try:
                in_flight = _kill_while_a_request_is_open(server, child, first, max(1, point - already))
            finally:
                if child.poll() is None:
                    child.kill()
                child.wait(timeout=30)
                child.stderr.close()
            assert child.returncode == -signal.SIGKILL
            # every request the server received from this child (one cut off mid-body by the kill too)
            received = len(server.chat_log()) - first
            stored = _cached(run) - before
            kills_seen.append((received, stored, received - stored, in_flight))
        final_first = len(server.chat_log())
        resumed = run_experiment(spec, run)
        paid_final = len(server.chat_log()) - final_first
        paid = len(server.chat_log()) - start
        assert server.max_serving == 1  # the child made one call at a time, as the bound assumes

    assert resumed.attrs["failed_cells"] == []
    pd.testing.assert_frame_equal(stable(resumed), stable(reference))
    assert not resumed.duplicated(["cell_id", "pipeline", "probe_id", "metric"]).any()
    events = list(read_log(run / "log.jsonl"))  # still parseable after every kill
    assert [e["event"] for e in events].count("cell_done") == reference["cell_id"].nunique()

    lost = sum(k[2] for k in kills_seen)
    attempts = _attempts(events)
    calls = [[e for e in a if e["event"] == "llm_call"] for a in attempts]
    hits = [sum(e["cached"] for e in c) for c in calls]
    print(f"kill drill: {paid_once} requests uninterrupted, {paid} over {kills} kills + resume; per kill "
          f"(received, stored, lost, in flight) = {kills_seen}; final attempt paid {paid_final}; "
          f"cache hits logged per attempt = {hits}")
    assert len(attempts) == kills + 1 and attempts[-1][0]["attempt"] == kills + 1
    for _received, _stored, lost_here, in_flight in kills_seen:
        assert 0 <= lost_here <= in_flight, kills_seen  # a kill costs at most the requests in flight
    # over the drill: the uninterrupted run's requests plus exactly the answers lost in flight
    assert paid == paid_once + lost, (paid, paid_once, kills_seen)
    assert _cached(run) == paid_once  # one stored answer per distinct prompt
    # the final attempt paid only for calls no attempt had stored; every other call was a cache hit
    assert paid_final == sum(not e["cached"] for e in calls[-1])
    assert hits[-1] == len(calls[-1]) - paid_final
    assert hits[-1] > 0  # it did resume from the cache


def test_short_kill_drill_two_kills(tmp_path):
    _drill(tmp_path, kills=2, conversations=2, sessions=10, seed=0)


@pytest.mark.soak
def test_long_kill_drill_five_kills(tmp_path):
    _drill(tmp_path, kills=5, conversations=3, sessions=30, seed=1)
