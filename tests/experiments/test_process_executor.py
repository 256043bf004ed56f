"""``[run] executor = "processes"``: cells on local worker processes give the serial rows, and leave no process behind."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pandas as pd
import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import FakeLLM
from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment
from tests.experiments.test_concurrent_cells import FailsOnConversation, _rows
from tests.experiments.test_ray_executor import FailsOnConversationAnywhere, _events, ctrl_c_child

PROCESSES = "executor = \"processes\"\nmax_cells = 2\n"  # two worker processes


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a zombie not yet reaped counts: it would be a leak too)."""
    return Path(f"/proc/{pid}").exists() if Path("/proc").is_dir() else _signalable(pid)


def _signalable(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _workers(run: Path, attempt: int | None = None) -> list[int]:
    [started] = _events(run, "processes_started", attempt)
    return started["pids"]


def _processes_spec(write_toml, registries, extra: str = PROCESSES, **kw) -> ExperimentSpec:
    return ExperimentSpec.from_toml(write_toml(extra=extra, name="processes.toml", **kw), registries)


def test_a_grid_on_worker_processes_gives_the_serial_rows_and_leaves_no_process(write_toml, registries, tmp_path):
    serial = run_experiment(ExperimentSpec.from_toml(write_toml(name="serial.toml"), registries), tmp_path / "serial")
    spec = _processes_spec(write_toml, registries)
    on_processes = run_experiment(spec, tmp_path / "run")

    assert serial["cell_id"].nunique() == 8 and not on_processes.attrs["failed_cells"]  # 4 pipelines x 2 convs
    pd.testing.assert_frame_equal(_rows(serial).drop(columns="attempt"), _rows(on_processes).drop(columns="attempt"))
    run = tmp_path / "run"
    pids = _workers(run)
    assert len(pids) == 2 and os.getpid() not in pids
    assert not any(_alive(pid) for pid in pids)  # every worker ended with the run
    tasks = _events(run, "process_task")
    assert sorted(e["cell_id"] for e in tasks) == sorted(serial["cell_id"].unique())
    assert {e["pid"] for e in tasks} == set(pids)  # both workers ran cells
    for cid in serial["cell_id"].unique():  # each cell's events came back whole, in order, done last
        mine = [e["event"] for e in _events(run) if e.get("cell_id") == cid]
        assert mine[0] == "cell_started" and mine[-2:] == ["process_task", "cell_done"]
    [attempt] = (run / "attempts.jsonl").read_text().splitlines()
    assert '"executor": "processes"' in attempt


def test_processes_resume_a_serial_run_running_only_the_missing_cells(write_toml, registries, tmp_path):
    run = tmp_path / "run"
    serial = run_experiment(ExperimentSpec.from_toml(write_toml(name="serial.toml"), registries), run)
    missing = sorted(serial["cell_id"].unique())[:3]
    for cid in missing:  # as if the serial run had been killed before these three cells
        (run / "rows" / f"{cid}.jsonl").unlink()

    resumed = run_experiment(_processes_spec(write_toml, registries), run)
    assert sorted(e["cell_id"] for e in _events(run, "cell_started", attempt=2)) == missing
    assert len(_events(run, "cell_resumed", attempt=2)) == 5
    pd.testing.assert_frame_equal(_rows(serial).drop(columns="attempt"), _rows(resumed).drop(columns="attempt"))
    assert set(resumed[resumed["cell_id"].isin(missing)]["attempt"]) == {2}

    again = run_experiment(_processes_spec(write_toml, registries), run)
    assert not _events(run, "cell_started", attempt=3) and not _events(run, "processes_started", attempt=3)
    pd.testing.assert_frame_equal(_rows(resumed), _rows(again))


def test_a_failing_cell_is_reported_as_in_a_serial_run(write_toml, registries, tmp_path):
    serial = run_experiment(ExperimentSpec.from_toml(write_toml(name="serial.toml"), registries), tmp_path / "serial", None, Injected(backends={"fake": FailsOnConversation()}))
    # an injected object that cannot be pickled (FakeLLM holds a lock) reaches forked workers as it is
    on_processes = run_experiment(_processes_spec(write_toml, registries), tmp_path / "run", None, Injected(backends={"fake": FailsOnConversation()}))
    assert len(serial.attrs["failed_cells"]) == 4  # the four cells of conversation u1
    assert sorted(on_processes.attrs["failed_cells"]) == sorted(serial.attrs["failed_cells"])
    pd.testing.assert_frame_equal(_rows(serial).drop(columns="attempt"), _rows(on_processes).drop(columns="attempt"))
    failed = _events(tmp_path / "run", "cell_failed")
    assert sorted((e["cell_id"], e["error"]) for e in failed) == sorted(serial.attrs["failed_cells"])
    assert not any(_alive(pid) for pid in _workers(tmp_path / "run"))


class RaisesABug(FakeLLM):
    """A fake backend with a bug: any call raises ``ZeroDivisionError``."""

    def complete(self, messages, **params):
        return 1 / 0


def test_a_bug_in_a_cell_stops_the_run_with_the_workers_traceback_and_no_worker_left(write_toml, registries,
                                                                                      tmp_path):
    with pytest.raises(RuntimeError, match=r"(?s)raised in worker process \d+:.*ZeroDivisionError"):
        run_experiment(_processes_spec(write_toml, registries), tmp_path / "run", None, Injected(backends={"fake": RaisesABug()}))
    pids = _workers(tmp_path / "run")
    assert len(pids) == 2 and not any(_alive(pid) for pid in pids)


class KillsItsWorkerOnce(FakeLLM):
    """A fake backend that kills its own process (SIGKILL) on the first call about conversation u1, once per run."""

    def __init__(self, marker: Path):
        super().__init__()
        self.marker = marker

    def complete(self, messages, **params):
        if "Porto" in str(messages) and not self.marker.exists():  # one of u1's facts (conftest)
            self.marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return super().complete(messages, **params)


def test_a_killed_worker_fails_its_cell_and_the_others_finish(write_toml, registries, tmp_path):
    marker = tmp_path / "killed"
    df = run_experiment(_processes_spec(write_toml, registries), tmp_path / "run", None, Injected(backends={"fake": KillsItsWorkerOnce(marker)}))
    [(cell_id, error)] = df.attrs["failed_cells"]
    assert f"worker process {marker.read_text()} running this cell was killed by SIGKILL" in error
    assert df["cell_id"].nunique() == 7 and cell_id not in set(df["cell_id"])  # the other worker ran the rest
    assert not any(_alive(pid) for pid in _workers(tmp_path / "run"))
    # the next run retries the failed cell (and only it)
    again = run_experiment(_processes_spec(write_toml, registries), tmp_path / "run", None, Injected(backends={"fake": KillsItsWorkerOnce(marker)}))
    assert not again.attrs["failed_cells"] and again["cell_id"].nunique() == 8
    assert [e["cell_id"] for e in _events(tmp_path / "run", "cell_started", attempt=2)] == [cell_id]


def test_spawned_workers_need_injected_objects_they_can_unpickle(write_toml, registries, tmp_path):
    from lyra_lab.experiments import CellJob, cell_setup
    from lyra_lab.experiments.executors._processes import CellProcesses

    spec = _processes_spec(write_toml, registries)
    job = CellJob(cell_setup(spec, "tiny"), None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"backends\['fake'\]: a FakeLLM cannot be sent to worker processes"):
        CellProcesses(job, 2, tmp_path, Injected(backends={"fake": FakeLLM()}), method="spawn")


@pytest.mark.slow
def test_spawned_workers_give_the_serial_rows(write_toml, registries, tmp_path, monkeypatch):
    from lyra_lab.experiments.executors import _processes

    monkeypatch.setattr(_processes, "start_method", lambda: "spawn")  # as on macOS and Windows
    serial = run_experiment(ExperimentSpec.from_toml(write_toml(name="serial.toml"), registries), tmp_path / "serial", None, Injected(backends={"fake": FailsOnConversation()}))
    spawned = run_experiment(_processes_spec(write_toml, registries), tmp_path / "run", None, Injected(backends={"fake": FailsOnConversationAnywhere()}))
    assert _events(tmp_path / "run", "processes_started")[0]["method"] == "spawn"
    assert sorted(spawned.attrs["failed_cells"]) == sorted(serial.attrs["failed_cells"])
    pd.testing.assert_frame_equal(_rows(serial).drop(columns="attempt"), _rows(spawned).drop(columns="attempt"))
    assert not any(_alive(pid) for pid in _workers(tmp_path / "run"))


def test_the_workers_default_to_the_cpus_and_never_outnumber_the_cells(write_toml, registries, tmp_path):
    from lyra_lab.experiments.executors._processes import cells_at_once

    assert cells_at_once(3) == 3
    assert cells_at_once(1) == len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    spec = _processes_spec(write_toml, registries, extra="executor = \"processes\"\nmax_cells = 16\n")
    run_experiment(spec, tmp_path / "run")
    assert len(_workers(tmp_path / "run")) == 8  # one per cell to run, not 16


def test_the_run_command_runs_on_worker_processes_with_the_executor_flag(write_toml, tmp_path, capsys):
    from lyra_lab.cli import main
    from tests.experiments.test_cli_run import EXPERIMENT

    toml = write_toml(EXPERIMENT)
    assert main(["run", str(toml), "--run-dir", str(tmp_path / "serial"), "--quiet", "--no-report"]) == 0
    assert main(["run", str(toml), "--run-dir", str(tmp_path / "run"), "--quiet", "--no-report",
                 "--executor", "processes"]) == 0
    [started] = _events(tmp_path / "run", "run_started")
    assert (started["executor"], started["todo"], started["aliases"]) == ("processes", 12, 4)  # aliases are copied
    assert len(_events(tmp_path / "run", "process_task")) == 12
    serial, on_processes = (pd.read_parquet(tmp_path / name / "results.parquet") for name in ("serial", "run"))
    pd.testing.assert_frame_equal(_rows(serial).drop(columns="attempt"), _rows(on_processes).drop(columns="attempt"))


CTRL_C_CHILD = ctrl_c_child('print("interrupted", flush=True)')


def test_ctrl_c_stops_the_workers_with_their_cells_in_flight(write_toml, tmp_path):
    import subprocess
    import sys
    import time

    toml, run = write_toml(extra=PROCESSES), tmp_path / "run"
    script = tmp_path / "child.py"
    script.write_text(CTRL_C_CHILD, encoding="utf-8")
    repo = Path(__file__).resolve().parents[2]  # the child imports tests.experiments
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")]))}
    child = subprocess.Popen([sys.executable, str(script), str(toml), str(run)], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, env=env, cwd=repo)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and child.poll() is None and not (
                (run / "log.jsonl").exists() and _events(run, "cell_started")):
            time.sleep(0.1)
        assert child.poll() is None, "the child ended before a cell started"
        time.sleep(3)  # cells in flight: each takes several 4 s calls
        os.kill(child.pid, signal.SIGINT)  # the driver alone: the workers must be stopped by it
        out, _ = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130 and "interrupted" in out
    assert _events(run, "run_interrupted") and len(list((run / "rows").glob("*.jsonl"))) < 8
    pids = _workers(run)
    assert len(pids) == 2 and not any(_signalable(pid) for pid in pids)  # not even as zombies of a dead parent


def test_the_largest_cells_go_out_first(write_toml, registries, tmp_path, monkeypatch):
    """Longest processing time first: with one worker the cells start largest (turns × probes) first."""
    from lyra_lab.corpus import Corpus
    from lyra_lab.experiments import executors
    from tests.experiments.conftest import tiny_corpus
    from tests.experiments.test_lazy_resources import LLM_FREE

    full = tiny_corpus(conversations=3, sessions=3)
    keep = {"u0": 1, "u1": 3, "u2": 2}  # sessions kept per conversation: u1 is the largest, u0 the smallest
    convs = tuple(type(c)(id=c.id, sessions=c.sessions[:keep[c.id]]) for c in full.conversations)
    turns = {t.id for c in convs for t in c.turns()}
    probes = tuple(p for p in full.probes if all(e in turns for e in p.evidence))
    Corpus(name="tiny", conversations=convs, probes=probes, format="native").save(tmp_path / "tiny.jsonl")
    monkeypatch.setattr(executors, "cells_at_once", lambda max_cells: 1)  # where the runner looks it up
    spec = _processes_spec(write_toml, registries, extra="executor = \"processes\"\n",
                           text=LLM_FREE)
    run_experiment(spec, tmp_path / "run")
    assert [e["workers"] for e in _events(tmp_path / "run", "processes_started")] == [1]  # else the order is a race
    started = sorted(_events(tmp_path / "run", "cell_started"), key=lambda e: e["t"])
    assert [e["conversation_id"] for e in started] == ["u1", "u2", "u0"]

