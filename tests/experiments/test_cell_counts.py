"""One cell count from the first line of a run to the last: plan, progress bar, heartbeat lines and the end.

The cli-tiny grid has 16 cells, 4 of them aliases (their rows are copied from a cell with the same memory,
not run): the plan says "12 of 16 cells to run", and every later count is out of 16 (the progress bar and
the heartbeat counted the 12 cells run, the run's last line the 16 finished).
"""

from __future__ import annotations

import re

from lyra_lab.cli import main
from lyra_lab.experiments import _runner
from lyra_lab.experiments.executors import _heartbeat
from tests.experiments.test_cli_run import EXPERIMENT


class _Bar:
    """A tqdm stand-in that remembers its total and where it got to."""

    made: list["_Bar"] = []

    def __init__(self, total=None, initial=0, desc="", **_):
        self.total, self.n, self.desc = total, initial, desc
        _Bar.made.append(self)

    def update(self, n=1):
        self.n += n

    def close(self):
        pass


def test_plan_bar_heartbeat_and_last_line_count_the_same_cells(write_toml, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(_heartbeat, "EVERY_S", 0.01)
    monkeypatch.setattr(_runner, "tqdm", _Bar)
    _Bar.made = []
    toml = write_toml(EXPERIMENT)
    assert main(["run", str(toml), "--run-dir", str(tmp_path / "out"), "--no-report"]) == 0
    captured = capsys.readouterr()
    assert "12 of 16 cells to run" in captured.out  # the plan: 4 aliases are copied, not run
    assert "(16 cells, " in " ".join(captured.out.split())  # the last line (wrapped at 100 columns)
    beats = re.findall(r"cli-tiny: (\d+)/(\d+) cells", captured.err)  # status lines (stderr is not a terminal)
    assert beats and {total for _, total in beats} == {"16"}
    (bar,) = [b for b in _Bar.made if b.desc == "cli-tiny: cells"]
    assert (bar.total, bar.n) == (16, 16)  # every cell counted, the aliases as their rows are copied


def test_a_resume_starts_the_count_at_the_cells_already_finished(write_toml, tmp_path, capsys, monkeypatch):
    toml = write_toml(EXPERIMENT)
    assert main(["run", str(toml), "--run-dir", str(tmp_path / "out"), "--quiet", "--no-report"]) == 0
    for rows in sorted((tmp_path / "out" / "rows").glob("*.jsonl"))[:3]:
        rows.unlink()  # three cells to do again (a mix of run and alias cells, or either)
    monkeypatch.setattr(_runner, "tqdm", _Bar)
    _Bar.made = []
    assert main(["run", str(toml), "--run-dir", str(tmp_path / "out"), "--no-report"]) == 0
    (bar,) = [b for b in _Bar.made if b.desc == "cli-tiny: cells"]
    assert bar.total == 16 and bar.n == 16
    assert "(16 cells, " in " ".join(capsys.readouterr().out.split())
