"""load_results: rows/ are the truth; results.parquet is rebuilt when stale; the run folder's writes are atomic."""

from __future__ import annotations


import pandas as pd
import pytest

from lyra_lab.runs._cell_rows import CellRows
from lyra_lab.runs import RunFolder, load_results


def row(cell, metric, value, **extra):
    base = {"run": "r", "cell_id": cell, "pipeline": "a+b+none|dense", "chunker": "a", "summarizer": "b",
            "rollup": "none", "recaller": "dense", "backend": "fake", "embedder": "hashing", "seed": 0,
            "corpus": "tiny", "conversation_id": "c", "probe_id": "p1", "category": "x", "metric": metric,
            "value": value, "simulated": True}
    return {**base, **extra}


def test_parquet_is_written_and_rebuilt_when_a_cell_is_added_or_removed(tmp_path):
    folder = RunFolder(tmp_path)
    folder.prepare()
    folder.write_rows("c-1", CellRows.from_records([row("c-1", "mrr", 0.5, **{"chunker.max_turns": 8})]))
    first = load_results(tmp_path)
    assert (tmp_path / "results.parquet").exists() and list(first["value"]) == [0.5]
    folder.write_rows("c-2", CellRows.from_records([row("c-2", "mrr", 1.0, **{"chunker.max_turns": 4})]))
    second = load_results(tmp_path)
    assert sorted(second["cell_id"]) == ["c-1", "c-2"]
    assert pd.read_parquet(tmp_path / "results.parquet")["cell_id"].nunique() == 2
    (tmp_path / "rows" / "c-1.jsonl").unlink()
    assert list(load_results(tmp_path)["cell_id"]) == ["c-2"]


def test_a_parameter_with_mixed_types_across_strategies_stays_readable(tmp_path):
    folder = RunFolder(tmp_path)
    folder.prepare()
    folder.write_rows("c-1", CellRows.from_records([row("c-1", "mrr", 0.5, **{"recaller.mode": "fast"})]))
    folder.write_rows("c-2", CellRows.from_records([row("c-2", "mrr", 0.7, **{"recaller.mode": 3})]))
    df = load_results(tmp_path)
    assert sorted(df["recaller.mode"]) == ["3", "fast"]
    assert df["value"].dtype == float and df["simulated"].dtype == bool


def test_rows_read_back_as_written(tmp_path):
    rows = [row("c-1", "mrr", v, probe_id=f"é{i}", **{"recaller.w": w, "recaller.big": 2**62 + i})
            for i, (v, w) in enumerate([(1e-05, 0.1), (1e16, 2.5), (0.3, 1e-7), (-0.0, 3.0)])]
    folder = RunFolder(tmp_path)
    folder.prepare()
    folder.write_rows("c-1", CellRows.from_records(rows))
    assert list(folder.read_rows("c-1").records()) == rows
    df = load_results(tmp_path)
    assert list(df["probe_id"]) == [f"é{i}" for i in range(4)] and list(df["recaller.big"]) == [2**62 + i for i in range(4)]


def test_a_broken_row_file_names_the_file_and_line(tmp_path):
    folder = RunFolder(tmp_path)
    folder.prepare()
    path = folder.write_rows("c-9", CellRows.from_records([row("c-9", "mrr", 1.0)]))
    path.write_text(path.read_text().splitlines()[0] + "\n{broken\n")
    with pytest.raises(ValueError, match=r"c-9.jsonl: line 2"):
        load_results(tmp_path)


def test_an_empty_run_folder_gives_an_empty_frame_with_the_schema_columns(tmp_path):
    RunFolder(tmp_path).prepare()
    df = load_results(tmp_path)
    assert df.empty and {"pipeline", "metric", "value", "probe_id"} <= set(df.columns)


def test_prepare_removes_leftover_temp_files_and_fresh_clears_previous_results(tmp_path):
    folder = RunFolder(tmp_path)
    folder.prepare()
    folder.write_rows("c-1", CellRows.from_records([row("c-1", "mrr", 0.5)]))
    (tmp_path / "rows" / ".c-2.jsonl.123.tmp").write_text("half a cell")
    (tmp_path / "notes.txt").write_text("mine")
    folder.prepare()
    assert folder.finished() == {"c-1"} and not list((tmp_path / "rows").glob(".*.tmp"))
    folder.prepare(fresh=True)
    assert folder.finished() == set() and (tmp_path / "notes.txt").exists()  # only what a run wrote is removed


def test_a_run_folder_in_use_by_another_run_is_refused(tmp_path):
    from lyra_lab._registry import ConfigError

    folder = RunFolder(tmp_path / "run")
    with folder.lock():
        with pytest.raises(ConfigError, match="in use by another run"):
            with RunFolder(tmp_path / "run").lock():
                pass
    with folder.lock():  # released on exit
        pass
