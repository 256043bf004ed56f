"""A cell's rows grouped in rows/<cell_id>.jsonl (run folder version 3): written, read back, refused when garbled."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import FakeLLM
from lyra_lab.commands._checks import _check_rows
from lyra_lab.commands._errors import UsageError
from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment
from lyra_lab.runs import CellRows, ResultsFormatError, RunFolder, load_results, read_cell_rows

JUDGED = """
[qa]
enabled = true
judges = [{ prompt = "correct_wrong_v1", backend = "fake" }]
"""


def _run(write_toml, registries, run, extra=""):
    return run_experiment(ExperimentSpec.from_toml(write_toml(extra=extra), registries), run, None, Injected(backends={"fake": FakeLLM()}))


def test_a_run_writes_groups_that_load_back_as_its_tidy_rows(write_toml, registries, tmp_path):
    run = tmp_path / "run"
    df = _run(write_toml, registries, run, JUDGED)  # QA and a judge: judge rows and conversation rows too
    assert (df["metric"] == "judge").any() and (df["probe_id"] == "").any() and "qa.scorer" in df.columns
    first = next((run / "rows").glob("*.jsonl")).read_text(encoding="utf-8").splitlines()
    assert json.loads(first[0])["schema"] == "cell_rows/1" and len(first) < len(df) / 4
    # every tidy row of every file is one row of the frame, with its value
    records = [r for path in sorted((run / "rows").glob("*.jsonl")) for r in read_cell_rows(path).records()]
    assert len(records) == len(df)
    key = ["cell_id", "pipeline", "probe_id", "metric", "judge"]
    expected = pd.DataFrame.from_records(records).fillna({"judge": ""}).set_index(key)["value"].sort_index()
    got = df.fillna({"judge": ""}).set_index(key)["value"].sort_index()
    pd.testing.assert_series_equal(got, expected)
    # the cached parquet gives what a fresh build gives
    pd.testing.assert_frame_equal(load_results(run), load_results(run, write=False))


def test_a_folder_of_an_older_row_shape_is_refused_in_one_line(write_toml, registries, tmp_path):
    run = tmp_path / "run"
    _run(write_toml, registries, run)
    (run / "lyra-run.json").write_text(json.dumps({"schema_version": 2}))
    with pytest.raises(ConfigError) as err:
        load_results(run)
    assert "schema version 2" in str(err.value) and "--fresh" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ConfigError):
        _run(write_toml, registries, run)


def _one_cell(tmp_path):
    folder = RunFolder(tmp_path)
    folder.prepare()
    rows = CellRows()
    for probe in ("q1", "q2"):
        rows.add({"cell_id": "c", "pipeline": "p|bm25", "probe_id": probe}, {"mrr": 0.5, "recall@1": 1.0})
    return folder.write_rows("c", rows)


def test_a_file_cut_short_is_one_line_naming_it(tmp_path):
    path = _one_cell(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))  # the last group lost
    for read in (lambda: load_results(tmp_path), lambda: read_cell_rows(path, ResultsFormatError)):
        with pytest.raises(ResultsFormatError) as err:
            read()
        assert str(err.value) == (f"{path}: holds 1 groups of 2 rows, its header (line 1) says 2 of 4: "
                                  "the file is cut short or garbled")
    with pytest.raises(UsageError, match=rf"^{path}: holds 1 groups"):
        _check_rows(tmp_path, path)


@pytest.mark.parametrize("garble, where", [
    (lambda lines: [lines[0], lines[1][:30] + b"\n", lines[2]], "line 2: not valid JSON"),
    (lambda lines: [lines[0], lines[1].replace(b'"metrics":0', b'"metrics":7'), lines[2]], "line 2: not a row group"),
    (lambda lines: [lines[0], lines[1].replace(b"[0.5,1.0]", b"[0.5]"), lines[2]], "line 2: not a row group"),
    (lambda lines: [lines[0].replace(b"cell_rows/1", b"cell_rows/2"), *lines[1:]],
     "line 1: cell rows schema version 2 is newer than this lyra-lab"),
])
def test_a_garbled_file_names_file_and_line(tmp_path, garble, where):
    path = _one_cell(tmp_path)
    path.write_bytes(b"".join(garble(path.read_bytes().splitlines(keepends=True))))
    with pytest.raises(ResultsFormatError) as err:
        load_results(tmp_path)
    assert str(err.value).startswith(f"{path}: {where}") and "\n" not in str(err.value)


def test_rows_keep_their_order_and_values_through_the_file(tmp_path):
    rows = CellRows()
    rows.add({"probe_id": "q", "x": float("nan"), "k": 1}, {"z": 1, "a": float("inf"), "m": -0.0})
    rows.add({"probe_id": "q", "judge": "j1", "k": 1.0}, {"judge": 1})
    rows.set_column("attempt", 3)
    path = RunFolder(tmp_path).rows_dir / "c.jsonl"
    RunFolder(tmp_path).prepare()
    RunFolder(tmp_path).write_rows("c", rows)
    back = read_cell_rows(path)
    assert [g.metric for g in back.groups] == [["z", "a", "m"], ["judge"]] and len(back) == 4
    assert back.groups[0].value == [1.0, float("inf"), -0.0] and back.groups[1].columns["attempt"] == 3
    assert str(back.groups[0].value[2]) == "-0.0" and back.groups[0].columns["x"] != back.groups[0].columns["x"]
    # a column with equal values of different types is not shared: each group keeps its own
    assert [repr(g.columns["k"]) for g in back.groups] == ["1", "1.0"]
    assert json.loads(path.read_text().splitlines()[0])["columns"] == {"attempt": 3, "probe_id": "q"}


def test_a_crash_before_the_rename_leaves_no_rows_file_and_the_next_run_clears_the_rest(tmp_path, monkeypatch):
    folder = RunFolder(tmp_path)
    folder.prepare()
    rows = CellRows()
    rows.add({"cell_id": "c", "pipeline": "p|bm25", "probe_id": "q"}, {"mrr": 0.5})

    def killed(*args):
        raise KeyboardInterrupt  # the process stops between fsync and rename

    with monkeypatch.context() as m:
        m.setattr("lyra_lab._atomic.os.replace", killed)
        with pytest.raises(KeyboardInterrupt):
            folder.write_rows("c", rows)
    # the interrupted write took its temp file with it; a hard kill's leftover is cleared by prepare
    # (tests/runs/test_results.py::test_prepare_removes_leftover_temp_files_and_fresh_clears_previous_results)
    assert folder.finished() == set() and not list(folder.rows_dir.glob(".c.jsonl.*.tmp"))
    assert load_results(tmp_path).empty
    folder.prepare()
    assert not list(folder.rows_dir.iterdir())
    folder.write_rows("c", rows)
    assert folder.finished() == {"c"} and read_cell_rows(folder.rows_dir / "c.jsonl") == rows
