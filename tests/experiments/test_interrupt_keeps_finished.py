"""Ctrl-C with several cells at once keeps every cell that finished its calls (issue 26 item 5).

The interrupt arrives while the runner writes the first cell that came back (``RunFolder.write_rows``
raises ``KeyboardInterrupt`` once, after the other cells in flight have finished): the cell being
written and every cell that finished meanwhile but was not handed back yet are written before the
interrupt goes on, ``run_interrupted`` names them, and a resume runs only the rest, to the rows of
an uninterrupted run.
"""

from __future__ import annotations

import time

import pandas as pd
import pytest

from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment
from lyra_lab.runs import RunFolder, read_log
from tests.experiments.test_runner import Fake, stable


@pytest.mark.parametrize("executor", ["threads", "processes"])
def test_an_interrupt_writes_the_cells_that_finished_before_exit(executor, write_toml, registries, tmp_path,
                                                                  monkeypatch):
    spec = ExperimentSpec.from_toml(write_toml(extra=f'max_cells = 4\nexecutor = "{executor}"\n'), registries)
    reference_llm = Fake()
    reference = run_experiment(spec, tmp_path / "reference", None, Injected(backends={"fake": reference_llm}))
    total_calls, cells = len(reference_llm.calls), reference["cell_id"].nunique()
    assert cells == 8

    llm = Fake()
    write_rows = RunFolder.write_rows
    interrupted = []

    def ctrl_c_while_writing(folder, cell_id, rows):
        if not interrupted:
            interrupted.append(cell_id)
            if executor == "threads":  # the pool goes on with every cell: wait until all made their calls
                deadline = time.monotonic() + 60
                while len(llm.calls) < total_calls and time.monotonic() < deadline:
                    time.sleep(0.05)
            time.sleep(2.0)  # the cells in flight finish (a worker process's calls are not seen here)
            raise KeyboardInterrupt
        return write_rows(folder, cell_id, rows)

    monkeypatch.setattr(RunFolder, "write_rows", ctrl_c_while_writing)
    run = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        run_experiment(spec, run, None, Injected(backends={"fake": llm}))
    monkeypatch.undo()
    landed = {p.stem for p in (run / "rows").glob("*.jsonl")}
    events = list(read_log(run / "log.jsonl"))
    (stop,) = [e for e in events if e["event"] == "run_interrupted"]
    assert set(stop["kept"]) == landed and interrupted[0] in landed  # the cell being written, too
    # threads: the pool ran every cell; processes: the 4 in flight and those that came back with the first
    assert len(landed) == 8 if executor == "threads" else len(landed) >= 5
    assert {e["cell_id"] for e in events if e["event"] == "cell_done"} == landed
    resumed = run_experiment(spec, run, None, Injected(backends={"fake": Fake()}))
    events = list(read_log(run / "log.jsonl"))
    second = max(i for i, e in enumerate(events) if e["event"] == "run_started")
    rerun = {e["cell_id"] for e in events[second:] if e["event"] == "cell_started"}
    assert rerun == set(reference["cell_id"]) - landed  # the kept cells were not run again
    pd.testing.assert_frame_equal(stable(resumed), stable(reference))
