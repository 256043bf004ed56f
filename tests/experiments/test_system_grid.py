"""Memory systems as pipelines of the grid (``[grid] systems``): the spec, the rows, failures, resume, Ctrl-C.

Real systems where they are quick (lyra-lab's pipeline built live, a pipeline served over HTTP by
``serve-memory``, the example HTTP service) and the fake MCP server of tests/systems for the faults
(a fake, for fault injection only).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.experiments import ExperimentSpec, RunOptions, run_experiment
from lyra_lab.runs import read_log
from tests.systems.conftest import REPO, SYNTHETIC, processes_running, processes_under

FAKE_MCP = REPO / "tests" / "systems" / "fake_mcp_server.py"
PIPE = {"chunker": {"name": "turn_window", "max_turns": 1}, "keep_raw": False}


def fake_mcp(mode: str, tag: Path, **fields: object) -> dict[str, object]:
    """The fake MCP server of tests/systems in ``mode`` (ok, hang, garbage, crash), mapped to its tools; ``tag``
    (an argument it ignores) tells this test's server processes from other tests'."""
    return {"name": "mcp", "command": [sys.executable, str(FAKE_MCP), mode, str(tag)], "env": [],
            "server_name": f"fake-{mode}",
            "store_tool": "store", "store_arguments": {"turn_id": "{turn_id}", "text": "{speaker}: {text}"},
            "search_tool": "search", "search_arguments": {"query": "{query}"}, "list_tool": "", "results": "items",
            "text_field": "text", "turn_ids_field": "id", "id_field": "id", "when_field": "", "timeout_s": 2.0,
            **fields}


def running_servers(mode: str, tag: Path) -> list[int]:
    """This test's fake servers in ``mode`` still running (their command line, not one that mentions them)."""
    return processes_running(f"{FAKE_MCP} {mode} {tag}")


def sessions_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Make this process's temp folders (every session's, where its servers run) under ``tmp_path/tmp``."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return temp


def experiment(systems: list[object], *, chunkers: bool = True, **run: object) -> dict[str, object]:
    grid: dict[str, object] = {"recallers": ["bm25"], "systems": systems}
    if chunkers:
        grid.update(chunkers=[PIPE["chunker"]], keep_raw=[False])
    return {"name": "systems", "corpus": {"path": str(SYNTHETIC), "max_probes": 8},
            "grid": grid, "run": {"backends": ["fake"], "embedders": ["hashing"], "ks": [1, 5, 10],
                                  "score_at_tokens": [128, 512], "cache": "off", **run},
            "qa": {"enabled": True, "max_probes": 2, "judges": [{"prompt": "correct_wrong_v1", "backend": "fake"}]}}


def probe_metrics(df, pipeline: str) -> set[str]:
    return set(df.loc[(df["pipeline"] == pipeline) & (df["probe_id"] != ""), "metric"])


def test_the_spec_names_systems_labels_them_and_checks_them():
    spec = ExperimentSpec.from_dict({"corpus": {"path": str(SYNTHETIC)},
                                     "grid": {"systems": ["mcp", {"name": "mem0", "threshold": 0.5}, "mem0"],
                                              "context_tokens": [500, 1000]}})
    assert spec.pipelines == () and len(spec.systems) == 6  # no chunkers needed; systems × context budgets
    from lyra_lab.experiments.grid._system_pipeline import system_labels

    assert sorted(system_labels(spec.systems).values()) == [
        "mcp:server-memory+ctx=1000", "mcp:server-memory+ctx=500", "mem0:raw[threshold=0.0]+ctx=1000",
        "mem0:raw[threshold=0.0]+ctx=500", "mem0:raw[threshold=0.5]+ctx=1000", "mem0:raw[threshold=0.5]+ctx=500"]
    assert spec.to_dict()["systems"][0]["system"]["name"] == "mcp"
    for grid, words in [({"systems": ["mem9"]}, "in table [grid] systems: unknown system 'mem9'"),
                        ({"systems": [{"name": "mem0", "batch": 0}]}, "parameter 'batch' = 0"),
                        ({"systems": ["mcp", "mcp"]}, "[grid] lists the same system twice"),
                        ({"systems": [3]}, "[grid] systems[0] must be a system name or a table, got int"),
                        ({}, "[grid] needs 'chunkers' (a list of chunker specs) or 'systems'")]:
        with pytest.raises(ConfigError) as caught:
            ExperimentSpec.from_dict({"corpus": {"path": str(SYNTHETIC)}, "grid": grid})
        assert words in str(caught.value) and "\n" not in str(caught.value), str(caught.value)


def test_systems_land_in_the_rows_of_the_grid_with_the_same_metrics(tmp_path):
    systems = [{"name": "pipeline", "pipeline": PIPE, "recaller": "bm25"},
               {"name": "served", "via": "http", "pipeline": PIPE, "recaller": "bm25"},
               fake_mcp("ok", tmp_path, turn_ids_field="", kind="fact")]
    df = run_experiment(ExperimentSpec.from_dict(experiment(systems)), tmp_path / "run",
                        RunOptions(progress=False))
    assert df.attrs["failed_cells"] == []
    pipelines = sorted(df["pipeline"].unique())
    assert pipelines == ["mcp:fake-ok", "pipeline:turn_window+bm25", "served-http:turn_window+bm25",
                         "turn_window+none+none|bm25"]
    names = {p: probe_metrics(df, p) for p in pipelines}
    reference = names["turn_window+none+none|bm25"]
    assert {"evidence_recall@10", "answer_in_context@512tok", "retention", "qa_f1", "judge",
            "recall_latency_s", "ndcg@5", "session_recall_any@5"} <= reference
    assert names["pipeline:turn_window+bm25"] == names["served-http:turn_window+bm25"] == reference
    # the fake server's hits name no turns: its turn-level retrieval is absent (never 0), the rest is there
    untraced = names["mcp:fake-ok"]
    assert not {m for m in untraced if m.split("@")[0] in ("evidence_recall", "coverage_recall", "ndcg", "mrr",
                                                          "recall_any", "session_recall_any")}
    assert {"answer_in_context@512tok", "qa_f1", "judge", "recall_latency_s", "context_tokens"} <= untraced
    assert "retention" not in untraced  # it cannot list its memory (list_tool = ""): not computed, not 0
    system_rows = df[df["pipeline"] == "mcp:fake-ok"]
    assert set(system_rows["traces_turns"]) == {False} and set(system_rows["system"]) == {"mcp:fake-ok"}
    # a pipeline built live and served over HTTP: the grid's replay rows, timing aside
    probe_rows = df[(df["probe_id"] != "") & ~df["metric"].str.contains("latency")]
    wide = probe_rows.pivot_table(index=["conversation_id", "probe_id", "metric", "judge"], columns="pipeline",
                                  values="value", dropna=False)
    for label in ("pipeline:turn_window+bm25", "served-http:turn_window+bm25"):
        assert (wide[label].fillna(-1) == wide["turn_window+none+none|bm25"].fillna(-1)).all(), label
    conv = df[(df["probe_id"] == "") & (df["pipeline"] == "served-http:turn_window+bm25")]
    figures = dict(zip(conv["metric"], conv["value"]))
    # every turn is written as it comes, then its chunk replaces it (keep_raw = false): 2 writes per turn
    assert figures["ingest.turns"] == 212 and figures["ingest.items"] == 424 and figures["ingest.failed_calls"] == 0
    assert figures["memory_entries"] == 212 and figures["ingest.s_per_turn"] > 0 and figures["open_s"] > 0


@pytest.mark.parametrize("mode, call", [("hang", "query"), ("garbage", "query"), ("crash", "query")])
def test_a_failing_system_fails_its_cell_only_and_leaves_no_process(tmp_path, monkeypatch, mode, call):
    temp = sessions_in(tmp_path, monkeypatch)
    spec = ExperimentSpec.from_dict(experiment([fake_mcp(mode, tmp_path)], chunkers=True))
    started = time.monotonic()
    df = run_experiment(spec, tmp_path / "run", RunOptions(progress=False))
    failed = df.attrs["failed_cells"]
    assert len(failed) == 2  # one cell per conversation, each failed on its own
    for _, error in failed:
        assert error.startswith(f"memory system 'mcp:fake-{mode}': {call} failed: ") and "\n" not in error, error
    assert sorted(df["pipeline"].unique()) == ["turn_window+none+none|bm25"]  # the run went on
    assert time.monotonic() - started < 120
    assert not processes_running(str(tmp_path)) and not processes_under(temp), processes_under(temp)
    events = list(read_log(tmp_path / "run" / "log.jsonl"))
    assert sum(e["event"] == "cell_failed" for e in events) == 2


def test_a_finished_system_cell_is_resumed_not_run_again(tmp_path):
    spec = ExperimentSpec.from_dict(experiment([{"name": "pipeline", "pipeline": PIPE}], chunkers=False))
    first = run_experiment(spec, tmp_path / "run", RunOptions(progress=False))
    again = run_experiment(spec, tmp_path / "run", RunOptions(progress=False))
    events = list(read_log(tmp_path / "run" / "log.jsonl"))
    assert sum(e["event"] == "cell_resumed" for e in events) == 2
    assert sum(e["event"] == "cell_started" for e in events) == 2  # the first run's two cells only
    assert len(again) == len(first) and set(again["pipeline"]) == {"pipeline:turn_window+bm25"}


def test_system_cells_run_in_worker_processes_as_in_the_driver(tmp_path, monkeypatch):
    temp = sessions_in(tmp_path, monkeypatch)
    systems = [{"name": "pipeline", "pipeline": PIPE}, fake_mcp("ok", tmp_path)]
    serial = run_experiment(ExperimentSpec.from_dict(experiment(systems, chunkers=False)), tmp_path / "a",
                            RunOptions(progress=False))
    spread = run_experiment(ExperimentSpec.from_dict(experiment(systems, chunkers=False, executor="processes",
                                                                max_cells=2)), tmp_path / "b", RunOptions(progress=False))
    keys = ["pipeline", "conversation_id", "probe_id", "metric", "judge"]

    def values(df):
        part = df[~df["metric"].str.contains("latency|_s$|s_per_turn")]
        return part.sort_values(keys)[keys + ["value"]].reset_index(drop=True)

    assert values(serial).equals(values(spread))
    assert not processes_under(temp), processes_under(temp)


CTRL_C = """
import sys
from lyra_lab.experiments import ExperimentSpec, RunOptions, run_experiment
spec = ExperimentSpec.from_dict(__import__("json").loads(sys.argv[1]))
try:
    run_experiment(spec, sys.argv[2], RunOptions(progress=False))
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


@pytest.mark.parametrize("executor", ["serial", "processes"])
def test_ctrl_c_during_a_system_cell_stops_every_process_it_started(tmp_path, executor):
    # processes: the driver stops the worker running the cell with SIGTERM, which the cell turns into a way out
    spec = experiment([fake_mcp("hang", tmp_path, timeout_s=600.0)], chunkers=False, executor=executor)
    temp = tmp_path / "tmp"  # every session's temp folder (the server's working folder) is made here
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    child = subprocess.Popen([sys.executable, "-c", CTRL_C, json.dumps(spec), str(tmp_path / "run")],
                             stdout=subprocess.PIPE, text=True, env=env, cwd=REPO)
    try:
        deadline = time.monotonic() + 60
        while not running_servers("hang", tmp_path) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert running_servers("hang", tmp_path), "the fake server never started"
        time.sleep(1.0)  # ingesting, then hanging in the first query
        os.kill(child.pid, signal.SIGINT)
        out, _ = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130 and "interrupted" in out
    time.sleep(0.5)
    assert not running_servers("hang", tmp_path) and not processes_under(temp), processes_under(temp)
    assert not list(Path(tmp_path / "run" / "rows").glob("*.jsonl"))  # nothing half-written
