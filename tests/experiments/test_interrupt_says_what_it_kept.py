"""An interrupted run says what it kept (its finished cells, the LLM answers and vectors in its caches) and
that re-running resumes — from the API (``RunInterrupted``) and from the CLI (its one line, exit 130)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lyra_lab.cli import main
from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment
from lyra_lab.experiments._interrupt import KeptWork, RunInterrupted
from lyra_lab.runs import RunFolder, read_log
from tests.experiments.test_runner import Fake


def _interrupt_after(monkeypatch, cells: int) -> list[str]:
    """Ctrl-C, once, when the runner writes its ``cells + 1``-th cell (that one is written on the way out)."""
    write_rows = RunFolder.write_rows
    written: list[str] = []
    pressed: list[bool] = []

    def ctrl_c(folder, cell_id, rows):
        if len(written) == cells and not pressed:
            pressed.append(True)
            raise KeyboardInterrupt
        written.append(cell_id)
        return write_rows(folder, cell_id, rows)

    monkeypatch.setattr(RunFolder, "write_rows", ctrl_c)
    return written


def test_the_api_raises_what_the_run_kept(write_toml, registries, tmp_path, monkeypatch):
    spec = ExperimentSpec.from_toml(write_toml(), registries)
    written = _interrupt_after(monkeypatch, 3)
    llm = Fake()
    with pytest.raises(RunInterrupted) as stopped:
        run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": llm}))
    kept = stopped.value.kept
    paid = sum(1 for e in read_log(tmp_path / "run" / "log.jsonl") if e.get("event") == "llm_call"
               and not e.get("cached"))
    assert kept.cells == len(written) == 4 and kept.of == 8 and kept.calls == paid > 0  # the 4th on the way out
    assert str(stopped.value).startswith("interrupted: kept 4 of 8 cells, ")
    assert str(stopped.value).endswith("; run the same command to resume")
    assert isinstance(stopped.value, KeyboardInterrupt)  # still an interrupt to whatever catches those


def test_the_cli_prints_it_in_one_line_and_exits_130(tmp_path, monkeypatch, capsys):
    corpus = Path(__file__).resolve().parents[2] / "datasets" / "synthetic_small.jsonl"
    toml = tmp_path / "grid.toml"
    toml.write_text(f"""name = "stopped"
[corpus]
path = "{corpus.as_posix()}"
[grid]
chunkers = [{{ name = "turn_window", max_turns = 1 }}, {{ name = "token_budget", max_tokens = 300 }}]
summarizers = ["none"]
recallers = ["bm25"]
[run]
embedders = ["none"]
""", encoding="utf-8")
    _interrupt_after(monkeypatch, 0)
    code = main(["run", str(toml), "--run-dir", str(tmp_path / "cli")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 130 and re.fullmatch(r"interrupted: kept 1 of \d+ cells, 0 vectors; run the same command to resume",
                                        err[-1]), err


def test_a_cache_that_keeps_nothing_says_so():
    line = KeptWork(cells=2, of=4, calls=5, vectors=0, cache="off").line()
    assert line == ('interrupted: kept 2 of 4 cells, 0 vectors (5 LLM calls paid but not kept: cache = "off"); '
                    "run the same command to resume")
    assert "1 vector;" in KeptWork(1, 1, 0, 1).line() and "LLM" not in KeptWork(1, 1, 0, 1).line()
