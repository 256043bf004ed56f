"""``[run] max_cells``: cells run concurrently, and the rows are the serial run's apart from timing columns."""

from __future__ import annotations

import threading

import pandas as pd
import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import FakeLLM
from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment
from lyra_lab.runs import read_log
from tests.experiments.test_kill_resume import kill_after_rows  # the same stand-ins and a slow fake backend

# Metrics measured in wall time: they differ between any two runs, serial or not.  Everything else must match.
TIMING_METRICS = (
    "recall_latency_s",
    "embed.latency_s", "embed.latency_p50_s", "embed.latency_p95_s", "embed.paid_latency_s",
    "summarize.latency_s", "summarize.latency_p50_s", "summarize.latency_p95_s", "summarize.paid_latency_s",
    "rollup.latency_s", "rollup.paid_latency_s",
)


class RendezvousFake(FakeLLM):
    """A fake backend whose first two calls wait for each other (a barrier), then answer as ``FakeLLM``.

    Within one cell calls are sequential, so the barrier only opens when two cells are in flight at
    once; run serially it would break after its timeout and fail the run.
    """

    def __init__(self) -> None:
        super().__init__()
        self._barrier = threading.Barrier(2, timeout=30)
        self._calls = 0
        self._lock = threading.Lock()

    def complete(self, messages, **params):
        with self._lock:
            self._calls += 1
            wait = self._calls <= 2
        if wait:
            self._barrier.wait()
        return super().complete(messages, **params)


def _rows(df: pd.DataFrame) -> pd.DataFrame:
    kept = df[~df["metric"].isin(TIMING_METRICS)]
    cols = sorted(kept.columns)
    return kept[cols].sort_values(["cell_id", "pipeline", "probe_id", "metric"]).reset_index(drop=True)


def test_four_cells_in_flight_give_the_serial_rows_apart_from_timing(write_toml, registries, tmp_path):
    serial = ExperimentSpec.from_toml(write_toml(extra="max_cells = 1\n", name="serial.toml"), registries)
    concurrent = ExperimentSpec.from_toml(write_toml(extra="max_cells = 4\n", name="concurrent.toml"), registries)
    assert (serial.max_cells, concurrent.max_cells) == (1, 4)

    a = run_experiment(serial, tmp_path / "serial", None, Injected(backends={"fake": FakeLLM()}))
    b = run_experiment(concurrent, tmp_path / "concurrent", None, Injected(backends={"fake": RendezvousFake()}))

    assert a["cell_id"].nunique() == 8  # 4 pipelines x 2 conversations
    assert set(TIMING_METRICS) & set(a["metric"]) >= {"recall_latency_s", "summarize.latency_s"}
    pd.testing.assert_frame_equal(_rows(a), _rows(b))

    events = list(read_log(tmp_path / "concurrent" / "log.jsonl"))
    done = [e["cell_id"] for e in events if e["event"] == "cell_done"]
    assert sorted(done) == sorted(a["cell_id"].unique())
    # every event between run_started and run_done that belongs to a cell names it
    cell_events = [e for e in events if e["event"] not in ("run_started", "run_done")]
    assert cell_events and all(e.get("cell_id") in set(done) for e in cell_events)
    # each cell's own events stay in order: started first, done last
    for cid in done:
        mine = [e["event"] for e in events if e.get("cell_id") == cid]
        assert mine[0] == "cell_started" and mine[-1] == "cell_done"


def test_resume_after_concurrent_run_runs_nothing_whatever_max_cells(write_toml, registries, tmp_path):
    spec = ExperimentSpec.from_toml(write_toml(extra="max_cells = 3\n"), registries)
    serial = ExperimentSpec.from_toml(write_toml(name="serial.toml"), registries)  # max_cells does not change rows
    first = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": FakeLLM()}))
    again = run_experiment(serial, tmp_path / "run", None, Injected(backends={"fake": FakeLLM()}))
    pd.testing.assert_frame_equal(_rows(first), _rows(again))
    starts = [e for e in read_log(tmp_path / "run" / "log.jsonl") if e["event"] == "cell_started"]
    assert len(starts) == 8  # the second run started no cell


class FailsOnConversation(FakeLLM):
    """A fake backend that fails for good (``BackendError``) on every call that quotes one of conversation u1's facts."""

    def complete(self, messages, **params):
        from lyra_lab.backends._types import BackendError

        if any(fact in str(messages) for fact in ("Porto", "pottery", "Saoirse")):  # u1's facts (conftest)
            raise BackendError("fake", "fake outage")
        return super().complete(messages, **params)


def test_a_failing_cell_does_not_stop_the_others(write_toml, registries, tmp_path):
    spec = ExperimentSpec.from_toml(write_toml(extra="max_cells = 4\n"), registries)
    df = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": FailsOnConversation()}))
    failed = df.attrs["failed_cells"]
    assert len(failed) == 4 and all("fake outage" in err for _, err in failed)  # the four cells of u1
    assert set(df["conversation_id"]) == {"u0"} and df["cell_id"].nunique() == 4


@pytest.mark.parametrize("value", [0, -2, 1.5, True, "4"])
def test_max_cells_must_be_a_positive_integer(write_toml, registries, value):
    text = f"max_cells = {str(value).lower() if isinstance(value, bool) else repr(value)}\n".replace("'", '"')
    with pytest.raises(ConfigError, match=r"\[run\] max_cells must be a positive integer"):
        ExperimentSpec.from_toml(write_toml(extra=text), registries)


def test_sigkill_with_four_cells_in_flight_then_resume_equals_an_uninterrupted_run(write_toml, registries, tmp_path):
    toml = write_toml(extra="max_cells = 4\n")
    spec = ExperimentSpec.from_toml(toml, registries)
    reference = run_experiment(spec, tmp_path / "reference", None, Injected(backends={"fake": FakeLLM()}))
    run = tmp_path / "run"
    finished = kill_after_rows(toml, run, tmp_path / "child.py", at_least=1)
    assert 1 <= len(finished) < 8

    resumed_llm = FakeLLM()
    resumed = run_experiment(spec, run, None, Injected(backends={"fake": resumed_llm}))
    left = reference[~reference["cell_id"].isin(finished) & (reference["metric"] == "summarize.calls")]
    assert len(resumed_llm.calls) == left.drop_duplicates("cell_id")["value"].sum()  # finished cells not redone
    pd.testing.assert_frame_equal(_rows(resumed).drop(columns="attempt"), _rows(reference).drop(columns="attempt"))
    events = [e["event"] for e in read_log(run / "log.jsonl")]  # still parseable after the kill
    assert events.count("cell_done") == 8
    assert not list((run / "rows").glob(".*.tmp"))


def test_cells_in_flight_share_their_backend_bound(write_toml, registries, tmp_path):
    """Four cells at once on one backend allowed 2 requests in flight: the server never serves more than 2."""
    from lyra_lab.backends import SimulatedServer

    with SimulatedServer(latency_s=0.05, default_max_tokens=8) as server:
        backend = f'{{ preset = "simulated", base_url = "{server.base_url}", max_concurrency = 2 }}'
        text = GRID_ON_SERVER.replace("BACKEND", backend)
        spec = ExperimentSpec.from_toml(write_toml(text, extra="max_cells = 4\n"), registries)
        df = run_experiment(spec, tmp_path / "run")
        calls = len(server.chat_log())
        peak = server.max_serving
    assert df["cell_id"].nunique() == 8 and not df.attrs["failed_cells"]
    assert calls == df[df["metric"] == "summarize.calls"].drop_duplicates("cell_id")["value"].sum() > 8
    assert peak <= 2


GRID_ON_SERVER = """
name = "tiny"
[corpus]
path = "tiny.jsonl"
[grid]
chunkers = [{ name = "turn_window", max_turns = 2 }, { name = "token_budget", max_tokens = 40 }]
summarizers = ["concat", "per_chunk"]
recallers = ["bm25"]
[run]
backends = [BACKEND]
embedders = ["none"]
ks = [1, 3]
cache = "off"
"""


def test_an_interrupt_with_four_cells_in_flight_keeps_finished_rows_and_resume_completes_the_rest(
        write_toml, registries, tmp_path):
    from tests.experiments.test_runner import Fake, stable

    spec = ExperimentSpec.from_toml(write_toml(extra="max_cells = 4\n"), registries)
    reference_llm = Fake()
    reference = run_experiment(spec, tmp_path / "reference", None, Injected(backends={"fake": reference_llm}))
    total_calls = len(reference_llm.calls)

    run = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):  # every cell in flight gets it at its next call after the limit
        run_experiment(spec, run, None, Injected(backends={"fake": Fake(interrupt_after=total_calls // 2)}))
    landed = {p.stem for p in (run / "rows").glob("*.jsonl")}
    assert len(landed) < 8  # cells still running at the interrupt landed nothing
    events = list(read_log(run / "log.jsonl"))
    assert {e["cell_id"] for e in events if e["event"] == "cell_done"} == landed  # no half-written cell
    assert sum(e["event"] == "run_interrupted" for e in events) == 1

    resumed_llm = Fake()
    resumed = run_experiment(spec, run, None, Injected(backends={"fake": resumed_llm}))
    done_calls = reference[(reference["metric"] == "summarize.calls") & reference["cell_id"].isin(landed)] \
        .drop_duplicates("cell_id")["value"].sum()
    assert len(resumed_llm.calls) == total_calls - done_calls  # landed cells were not run again
    assert not resumed.duplicated(["cell_id", "pipeline", "conversation_id", "probe_id", "metric"]).any()
    pd.testing.assert_frame_equal(stable(resumed), stable(reference))
