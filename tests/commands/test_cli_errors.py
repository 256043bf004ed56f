"""Every command, given each kind of bad argument, prints one ``error:`` line and exits 2 — never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lyra_lab.cli import main
from lyra_lab.runs import CellRows

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "corpus"
CORPUS = FIXTURES / "locomo_mini.json"
GRID = """
name = "bad"
[corpus]
path = "{corpus}"
[grid]
chunkers = ["turn_window"]
recallers = ["bm25"]
[run]
backends = {backends}
embedders = ["hashing"]
"""


def _experiment(tmp_path: Path, backends: str = '["fake"]', corpus: Path = CORPUS) -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(GRID.format(corpus=corpus, backends=backends), encoding="utf-8")
    return path


def _run_folder(tmp_path: Path, files: dict[str, str | bytes] | None = None) -> Path:
    run = tmp_path / "runs" / "r"
    (run / "rows").mkdir(parents=True)
    (run / "spec.json").write_text(json.dumps({"name": "r"}), encoding="utf-8")
    (run / "lyra-run.json").write_text(json.dumps({"schema_version": 3}), encoding="utf-8")
    for name, content in (files or {}).items():
        path = run / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return run


ROWS_HEADER = '{"columns":{},"groups":1,"metrics":[["m"]],"rows":1,"schema":"cell_rows/1"}\n'

# (id, argv builder, a fragment the error line must contain)
CASES = [
    ("import-missing", lambda t: ["import", str(t / "nope.json")], "does not exist"),
    ("import-folder", lambda t: ["import", str(t)], "is a folder"),
    ("import-missing-probes", lambda t: ["import", str(CORPUS), "--probes", str(t / "p.jsonl")], "does not exist"),
    ("import-bad-format", lambda t: ["import", str(CORPUS), "--format", "chatgp"], "did you mean 'chatgpt'"),
    ("import-typo-flag", lambda t: ["import", str(CORPUS), "--fromat", "locomo"], "did you mean '--format'"),
    ("import-out-folder", lambda t: ["import", str(CORPUS), "--out", str(t)], "is a folder"),
    ("import-wrong-format", lambda t: ["import", str(CORPUS), "--format", "chatgpt"], str(CORPUS)),
    ("report-missing", lambda t: ["report", str(t / "nope")], "does not exist"),
    ("report-file", lambda t: ["report", str(CORPUS)], "is a file, not a folder"),
    ("report-not-a-run", lambda t: ["report", str(t)], "not a lyra-lab run folder"),
    ("report-newer-spec", lambda t: ["report", str(_run_folder(t, {"spec.json": "[1, 2]"}))],
     "made by a newer version"),
    ("report-corrupt-rows", lambda t: ["report", str(_run_folder(t, {"rows/a.jsonl": ROWS_HEADER + "{oops\n"}))],
     "line 2"),
    ("report-newer-rows", lambda t: ["report", str(_run_folder(t, {"rows/a.jsonl": "[\"v2\"]\n"}))],
     "made by a newer version"),
    ("report-corrupt-parquet", lambda t: ["report", str(_run_folder(t, {"results.parquet": b"PAR1garbage"}))],
     "corrupt or not a Parquet file"),
    ("report-newer-schema", lambda t: ["report", str(_run_folder(t, {"lyra-run.json": '{"schema_version": 4}'}))],
     "run folder schema version 4 is newer than this lyra-lab; this lyra-lab supports version 3"),
    ("report-older-schema", lambda t: ["report", str(_run_folder(t, {"lyra-run.json": '{"schema_version": 0}'}))],
     "run folder schema version 0 is older than this lyra-lab reads; this lyra-lab supports version 3"),
    ("report-bad-schema", lambda t: ["report", str(_run_folder(t, {"lyra-run.json": '{"schema": "x"}'}))],
     "lyra-run.json: unreadable run folder record"),
    ("report-resamples", lambda t: ["report", str(t), "--resamples", "0"], "--resamples"),
    ("plan-missing", lambda t: ["plan", str(t / "nope.toml")], "does not exist"),
    ("plan-typo-flag", lambda t: ["plan", str(t / "nope.toml"), "--calibarte"], "did you mean '--calibrate'"),
    ("recall-missing", lambda t: ["recall-eval", str(t / "c.json"), "--recaller", "bm25"], "does not exist"),
    ("recall-folder", lambda t: ["recall-eval", str(t), "--recaller", "bm25"], "is a folder"),
    ("recall-typo-recaller", lambda t: ["recall-eval", str(CORPUS), "--recaller", "hybird"], "did you mean 'hybrid'"),
    ("recall-typo-flag", lambda t: ["recall-eval", str(CORPUS), "--recaler", "bm25"], "did you mean '--recaller'"),
    ("recall-category", lambda t: ["recall-eval", str(CORPUS), "--recaller", "bm25", "--embedder", "none",
                                   "--categories", "1,2,9"], "has categories"),
    ("recall-labels", lambda t: ["recall-eval", str(CORPUS), "--recaller", "bm25", "--category-labels", "x"],
     "invalid choice"),
    ("recall-bad-json", lambda t: ["recall-eval", str(CORPUS), "--recaller", "{nope"], "not valid JSON"),
    ("serve-missing-model", lambda t: ["serve-local", "--model", str(t / "m.gguf")], "not found"),
    ("serve-folder-model", lambda t: ["serve-local", "--model", str(t)], "is a directory"),
    ("run-missing", lambda t: ["run", "missing.toml"], "experiment file missing.toml does not exist"),
    ("run-folder", lambda t: ["run", str(t)], "is a folder"),
    ("run-bad-toml", lambda t: ["run", str(_write(t / "x.toml", "name = "))], "not valid TOML"),
    ("run-unknown-key", lambda t: ["run", str(_write(t / "x.toml", "nmae = 1"))], "unknown key 'nmae'"),
    ("run-missing-corpus", lambda t: ["run", str(_experiment(t, corpus=t / "none.json"))], "does not exist"),
    ("run-bad-backend", lambda t: ["run", str(_experiment(t, '["opneai/gpt"]')), "--run-dir", str(t / "r")],
     "unknown backend preset"),
    ("run-dir-is-file", lambda t: ["run", str(_experiment(t)), "--run-dir", str(CORPUS)], "is a file"),
    ("run-dir-newer", lambda t: ["run", str(_experiment(t)), "--run-dir",
                                 str(_run_folder(t, {"spec.json": "{"}))], "not a lyra-lab run folder"),
    ("run-dir-newer-schema", lambda t: ["run", str(_experiment(t)), "--run-dir",
                                        str(_run_folder(t, {"lyra-run.json": '{"schema_version": 9}'}))],
     "run folder schema version 9 is newer than this lyra-lab; this lyra-lab supports version 3"),
    ("run-typo-command", lambda t: ["rn", "x.toml"], "did you mean 'run'"),
    ("demo-dir-newer", lambda t: ["demo", "--run-dir", str(_run_folder(t, {"spec.json": "3"}))],
     "made by a newer version"),
    ("demo-dir-newer-schema", lambda t: ["demo", "--run-dir", str(_run_folder(t, {"lyra-run.json":
                                                                                   '{"schema_version": 4}'}))],
     "run folder schema version 4 is newer"),
    ("demo-typo-flag", lambda t: ["demo", "--frsh"], "did you mean '--fresh'"),
    ("demo-dir-is-file", lambda t: ["demo", "--run-dir", str(CORPUS)], "is a file"),
    ("bench-missing-corpus", lambda t: ["bench", "--corpus", str(t / "c.json"), "--no-plots"], "does not exist"),
    ("bench-folder-corpus", lambda t: ["bench", "--corpus", str(t), "--no-plots"], "is a folder"),
    ("bench-bad-backend", lambda t: ["bench", "--backend", "nosuch", "--requests", "1", "--concurrency", "1",
                                     "--out", str(t / "b")], "unknown backend preset"),
    ("bench-zero-requests", lambda t: ["bench", "--requests", "0"], "--requests must be >= 1"),
    ("bench-zero-attempts", lambda t: ["bench", "--max-attempts", "0"], "--max-attempts must be >= 1"),
    ("bench-time-cap", lambda t: ["bench", "--time-cap", "-1"], "--time-cap must be > 0"),
    ("bench-bad-levels", lambda t: ["bench", "--concurrency", "x"], "expected comma-separated"),
    ("show-missing", lambda t: ["show", str(t / "nope"), "q1"], "does not exist"),
    ("show-file", lambda t: ["show", str(CORPUS), "q1"], "is a file, not a folder"),
    ("show-not-a-run", lambda t: ["show", str(t), "q1"], "not a lyra-lab run folder"),
    ("show-corrupt-rows", lambda t: ["show", str(_run_folder(t, {"rows/a.jsonl": ROWS_HEADER + "{oops\n"})), "q1"], "line 2"),
    ("show-unknown-probe", lambda t: ["show", str(_run_folder(t, {"rows/a.jsonl": _ROW})), "conv:q2"],
     "no probe 'conv:q2' in this run; did you mean 'conv:q1'?"),
    ("datasets-missing-from", lambda t: ["datasets", "get", "locomo", "--from", str(t / "nope.json")],
     "nope.json: does not exist"),
    ("datasets-wrong-file", lambda t: ["datasets", "get", "locomo", "--from", str(CORPUS)],
     "not the pinned locomo10.json"),  # refused before anything is written
    ("datasets-unknown", lambda t: ["datasets", "get", "locomoo"], "did you mean 'locomo'"),
    ("datasets-path-unknown", lambda t: ["datasets", "path", "locomo10"], "invalid choice: 'locomo10'"),
    ("compare-missing", lambda t: ["compare", str(t / "nope")], "run folder"),
    ("export-missing", lambda t: ["export", str(t / "nope"), "--out", str(t / "x.zip")], "does not exist"),
    ("export-not-a-run", lambda t: ["export", str(t), "--out", str(t / "x.zip")], "not a lyra-lab run folder"),
    ("rescore-missing", lambda t: ["rescore", str(t / "nope.zip"), "--run-dir", str(t / "r")], "does not exist"),
    ("rescore-not-an-export", lambda t: ["rescore", str(CORPUS), "--run-dir", str(t / "r")],
     "not a lyra-lab export file"),
    ("rescore-bad-budgets", lambda t: ["rescore", str(CORPUS), "--run-dir", str(t / "r"), "--score-at-tokens", "a"],
     "expected integers"),
    ("report-table-typo", lambda t: ["report", str(t), "--table", "locomoo"], "did you mean 'locomo'"),
    ("compare-file", lambda t: ["compare", str(CORPUS)], "is a file, not a folder"),
    ("compare-not-a-run", lambda t: ["compare", str(t), str(t / "nope")], "not a lyra-lab run folder"),
    ("compare-bad-resamples", lambda t: ["compare", str(t), "--resamples", "0"], "--resamples must be >= 1"),
    ("compare-unknown-metric", lambda t: ["compare", str(_run_folder(t, {"rows/a.jsonl": _ROW})), "--metric", "mrr"],
     "no per-probe 'mrr' rows to compare; it has: recall@1"),
    ("view-missing", lambda t: ["view", str(t / "nope")], "folder of runs"),
    ("view-file", lambda t: ["view", str(CORPUS)], "is a file, not a folder"),
    ("view-no-runs", lambda t: ["view", str(t)], "no run folder in it"),
    ("view-typo-flag", lambda t: ["view", str(t), "--opne"], "did you mean '--open'"),
]
_ROW = CellRows.from_records([{"run": "r", "cell_id": "a", "pipeline": "x|bm25", "conversation_id": "conv",
                              "probe_id": "conv:q1", "category": "", "metric": "recall@1", "value": 1.0, "seed": 0,
                              "simulated": False}]).to_jsonl().decode()


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("build, fragment", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_argument_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch, build, fragment):
    monkeypatch.chdir(tmp_path)
    argv = build(tmp_path)
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("error: ") and fragment in lines[0], lines[0]
    assert "Traceback" not in captured.err + captured.out


def test_every_command_is_covered():
    from lyra_lab.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    covered = {argv_id.split("-")[0] for argv_id, *_ in CASES}
    assert {name.split("-")[0] for name in sub.choices} - {"probes"} <= covered


def test_bad_backend_leaves_no_run_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for backends in ('["nosuch"]', '["openai/gpt-4o-mini"]', '[{ preset = "local", model_path = "no.gguf" }]',
                     '[{ preset = "local", max_concurency = 2 }]'):
        run_dir = tmp_path / "run"
        assert main(["run", str(_experiment(tmp_path, backends)), "--run-dir", str(run_dir)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("error: "), err
        assert not run_dir.exists(), backends


def test_fresh_starts_over_a_folder_it_cannot_read(tmp_path, capsys):
    run = _run_folder(tmp_path, {"spec.json": "{", "rows/x.jsonl": "[1]\n"})
    assert main(["run", str(_experiment(tmp_path)), "--run-dir", str(run), "--quiet", "--no-report"]) == 2
    assert "not a lyra-lab run folder" in capsys.readouterr().err
    # it holds rows: off a terminal, --fresh deletes them only with --yes
    assert main(["run", str(_experiment(tmp_path)), "--run-dir", str(run), "--quiet", "--no-report", "--fresh",
                 "--yes"]) == 0
    assert json.loads((run / "spec.json").read_text())["name"] == "bad"


def test_failure_inside_the_run_removes_a_new_folder(tmp_path, capsys):
    corpus = _write(tmp_path / "broken.json", '[{"sample_id": 1')  # exists, but fails once the run loads it
    run_dir = tmp_path / "run"
    assert main(["run", str(_experiment(tmp_path, corpus=corpus)), "--run-dir", str(run_dir)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {corpus}")
    assert not run_dir.exists()


def test_unexpected_failure_names_it_and_writes_the_traceback(tmp_path, capsys, monkeypatch):
    from lyra_lab.commands import import_corpus

    def boom(args):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(import_corpus, "run", boom)
    assert main(["import", str(CORPUS)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("error: lyra-lab import failed unexpectedly: RuntimeError: disk on fire (traceback in ")
    log = Path(err.rsplit("traceback in ", 1)[1].rstrip(")\n"))
    try:
        assert "Traceback" in log.read_text() and "disk on fire" in log.read_text()
    finally:
        log.unlink()


def test_unexpected_failure_in_a_run_goes_to_its_log(tmp_path, capsys, monkeypatch):
    from lyra_lab.commands import report

    run = _run_folder(tmp_path, {"rows/a.jsonl": _ROW})

    def boom(*a, **k):
        raise RuntimeError("plot failed")

    monkeypatch.setattr("lyra_lab.reports.write_report", boom)
    assert main(["report", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.strip().endswith(f"(traceback in {run / 'log.jsonl'})")
    event = json.loads((run / "log.jsonl").read_text().splitlines()[-1])
    assert event["event"] == "cli_error" and "Traceback" in event["traceback"]
    assert report  # the module the patched function is used from


@pytest.mark.parametrize("argv, expected", [
    (["run", "missing.toml"], "error: experiment file missing.toml does not exist"),
    (["recall-eval", str(CORPUS), "--recaller", "hybird"], "did you mean 'hybrid'?"),
])
def test_subprocess_one_line(tmp_path, argv, expected):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "lyra_lab.cli", *argv], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and expected in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
