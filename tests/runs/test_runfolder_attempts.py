"""A record per run attempt, the attempt of every row, and the run folder's schema version."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import FakeLLM
from lyra_lab.experiments import ExperimentSpec, Injected, RunOptions, run_experiment
from lyra_lab.runs import RunFolder, load_results


def _run(write_toml, registries, run, resume=True):
    return run_experiment(ExperimentSpec.from_toml(write_toml(), registries), run, RunOptions(resume=resume),
                          Injected(backends={"fake": FakeLLM()}))


def test_each_attempt_appends_its_record_and_rows_name_their_attempt(write_toml, registries, tmp_path):
    run = tmp_path / "run"
    first = _run(write_toml, registries, run)
    cells = sorted(set(first["cell_id"]))
    for cell in cells[:3]:  # lose three cells: the next attempt redoes them
        (run / "rows" / f"{cell}.jsonl").unlink()
    second = _run(write_toml, registries, run)
    attempts = RunFolder(run).attempts()
    assert [a["attempt"] for a in attempts] == [1, 2]
    assert [a["cells_finished_before"] for a in attempts] == [0, len(cells) - 3]
    assert all({"packages", "git", "python", "machine", "platform", "dataset_sha256", "started_at"} <= set(a)
               for a in attempts)
    assert attempts[0]["dataset_sha256"] == attempts[1]["dataset_sha256"]
    by_cell = second.groupby("cell_id")["attempt"].unique().map(list).to_dict()
    assert by_cell == {c: [2] if c in cells[:3] else [1] for c in cells}
    pd.testing.assert_frame_equal(_timeless(second), _timeless(first))


def _timeless(df):
    """Rows minus wall-clock measurements and the attempt column (both differ between attempts by design)."""
    return df[~df["metric"].str.contains("latency")].drop(columns="attempt").reset_index(drop=True)


def test_a_torn_attempt_line_is_skipped_and_numbers_never_repeat(tmp_path):
    folder = RunFolder(tmp_path / "run")
    folder.prepare()
    assert folder.start_attempt("abc")["attempt"] == 1
    with open(folder.attempts_path, "ab") as fh:
        fh.write(b'{"attempt": 2, "started_at": "20')  # killed while writing
    assert [a["attempt"] for a in folder.attempts()] == [1]
    assert folder.start_attempt("abc")["attempt"] == 2
    assert [a["attempt"] for a in folder.attempts()] == [1, 2]
    assert all(json.loads(line) for line in folder.attempts_path.read_text().splitlines()[-1:])


def test_a_folder_from_before_schema_versions_is_refused_in_one_line(write_toml, registries, tmp_path):
    run = tmp_path / "run"
    _run(write_toml, registries, run)
    (run / "lyra-run.json").unlink()  # what a folder looked like before schema versions
    with pytest.raises(ConfigError) as err:
        load_results(run)
    assert "schema version 1 is older than this lyra-lab reads" in str(err.value) and "--fresh" in str(err.value)


@pytest.mark.parametrize("version, words", [
    (4, "run folder schema version 4 is newer than this lyra-lab; this lyra-lab supports version 3;"
        " upgrade lyra-lab to read it, or choose another --run-dir"),
    (0, "run folder schema version 0 is older than this lyra-lab reads; this lyra-lab supports version 3"),
    ("2", "run folder schema version '2' is not a version"),
])
def test_a_folder_of_another_schema_is_refused_in_one_line(write_toml, registries, tmp_path, version, words):
    run = tmp_path / "run"
    _run(write_toml, registries, run)
    (run / "lyra-run.json").write_text(json.dumps({"schema_version": version}))
    for opening in (lambda: load_results(run), lambda: _run(write_toml, registries, run)):
        with pytest.raises(ConfigError) as err:
            opening()
        assert str(err.value).startswith(f"{run}: {words}") and "\n" not in str(err.value)
    # --fresh starts it over at the current version
    _run(write_toml, registries, run, resume=False)
    assert json.loads((run / "lyra-run.json").read_text()) == {"schema_version": 3}


def test_an_unreadable_schema_record_is_refused(tmp_path):
    run = tmp_path / "run"
    (run / "rows").mkdir(parents=True)
    (run / "lyra-run.json").write_text("{")
    with pytest.raises(ConfigError, match=r"lyra-run.json: unreadable run folder record"):
        load_results(run)
