"""``lyra-lab datasets``: list, path, and get --from, each failure one ``error:`` line with exit 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lyra_lab import datasets
from lyra_lab.cli import main
from tests.helpers.locomo import needs_locomo

REAL_LOCOMO = datasets.find("locomo")  # the user's copy, found before a test moves the data folder


@pytest.fixture(autouse=True)
def private_data_dir(tmp_path, monkeypatch):
    folder = tmp_path / "data"
    monkeypatch.setenv(datasets.DATA_DIR_ENV, str(folder))
    for ds in datasets.CATALOG.values():
        monkeypatch.delenv(ds.env_var, raising=False)
    return folder


def _error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err
    return err.strip()


def test_list_names_every_dataset_and_where_it_would_be(capsys, private_data_dir):
    assert main(["datasets", "list"]) == 0
    out = capsys.readouterr().out
    assert f"data folder: {private_data_dir}" in out
    for name, ds in datasets.CATALOG.items():
        assert name in out and ds.env_var in out
    assert out.count("not installed") == len(datasets.CATALOG)


def test_path_of_a_missing_dataset_is_the_one_message(capsys):
    assert main(["datasets", "path", "locomo"]) == 2
    assert _error_line(capsys) == "error: " + datasets.missing_message("locomo")


def test_get_from_a_wrong_file_installs_nothing(tmp_path, capsys, private_data_dir):
    wrong = tmp_path / "locomo10.json"
    wrong.write_text("[]", encoding="utf-8")
    assert main(["datasets", "get", "locomo", "--from", str(wrong), "--no-progress"]) == 2
    line = _error_line(capsys)
    assert line.startswith(f"error: {wrong}: not the pinned locomo10.json (2,805,274 bytes, sha256 79fa87e9")
    assert line.endswith("this one has 2 bytes; nothing installed")
    assert not (private_data_dir / "locomo10.json").exists()


@pytest.mark.parametrize("argv, expected", [
    (["datasets", "get", "locomo", "--from", "no/such/file.json"], "error: no/such/file.json: does not exist"),
    (["datasets", "get", "locomoo"], "did you mean 'locomo'?"),
    (["datasets", "get", "locomo", "longmemeval-s", "--from", "x.json"], "--from installs one file"),
    (["datasets", "fetch", "locomo"], "invalid choice: 'fetch'"),
])
def test_bad_arguments_are_one_line(argv, expected, capsys):
    assert main(argv) == 2
    assert expected in _error_line(capsys)


@needs_locomo
def test_get_from_the_real_copy_then_every_command_finds_it(capsys, private_data_dir, tmp_path):
    assert main(["datasets", "get", "locomo", "--from", str(REAL_LOCOMO)]) == 0
    installed = private_data_dir / "locomo10.json"
    assert f"locomo: copied {installed}" in " ".join(capsys.readouterr().out.split())  # wrapped at 100 columns
    assert main(["datasets", "path", "locomo"]) == 0
    assert capsys.readouterr().out.strip() == str(installed)
    assert main(["datasets", "get", "locomo", "--from", str(installed)]) == 0
    assert "already installed" in capsys.readouterr().out
    # the console script, as a user types it: an experiment file naming dataset:locomo runs on it
    toml = tmp_path / "exp.toml"
    toml.write_text('name = "x"\n[corpus]\npath = "dataset:locomo"\nconversations = 1\nmax_probes = 5\n'
                    '[grid]\nchunkers = [{ name = "turn_window", max_turns = 1 }]\nrecallers = ["bm25"]\n'
                    '[run]\nbackends = ["fake"]\nembedders = ["none"]\nks = [5]\ncache = "off"\n', encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "lyra_lab.cli", "run", str(toml), "--run-dir", str(tmp_path / "run"),
                           "--no-report", "--quiet"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "run" / "results.parquet").exists()
