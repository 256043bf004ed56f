"""``lyra-lab view``'s list of runs: nested folders of runs are found, and "the last run first" is by the runs.

A run folder here is what ``is_run`` recognises (a ``spec.json``); the runs never ran, so each is listed
with its status, and the order and names are what is checked.
"""

from __future__ import annotations

import os
from pathlib import Path

from lyra_lab.reports import runs_overview, write_index


def _run(folder: Path, ran_at: float) -> Path:
    folder.mkdir(parents=True)
    (folder / "spec.json").write_text("{}", encoding="utf-8")
    (folder / "log.jsonl").write_text("", encoding="utf-8")
    for path in (folder / "spec.json", folder / "log.jsonl"):
        os.utime(path, (ran_at, ran_at))
    return folder


def test_a_run_in_a_nested_folder_of_runs_is_listed_by_its_path(tmp_path):
    _run(tmp_path / "first", 1_000)
    _run(tmp_path / "ablations" / "chunk_sizes", 2_000)
    names = [e.name for e in runs_overview(tmp_path)]
    assert names == ["ablations/chunk_sizes", "first"]


def test_a_report_written_later_does_not_make_an_old_run_the_last(tmp_path):
    old = _run(tmp_path / "old", 1_000)
    _run(tmp_path / "new", 2_000)
    (old / "report").mkdir()
    (old / "report" / "summary.md").write_text("# Report", encoding="utf-8")  # written now, long after both ran
    assert [e.name for e in runs_overview(tmp_path)] == ["new", "old"]


def test_the_page_counts_one_run_in_the_singular(tmp_path):
    _run(tmp_path / "only", 1_000)
    page = write_index(tmp_path)
    text = page.path.read_text(encoding="utf-8")
    assert "1 run (" in text and "1 runs" not in text
