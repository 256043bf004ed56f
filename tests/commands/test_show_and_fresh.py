"""``lyra-lab show`` on a planted run (an id's unique end, the list of ids) and ``run --fresh`` asking first."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.cli import main
from lyra_lab.experiments import resolve_probe_id, run_probes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"
GRID = """
name = "planted"
[corpus]
path = "planted.jsonl"
[grid]
chunkers = [{ name = "turn_window", max_turns = 1 }]
recallers = ["bm25"]
[run]
backends = ["fake"]
embedders = ["hashing"]
ks = [1, 5]
cache = "off"
"""


@pytest.fixture(scope="module")
def planted_run(tmp_path_factory) -> Path:
    """A finished run (with its report) over the bundled ChatGPT export with planted probes."""
    work = tmp_path_factory.mktemp("planted")
    assert main(["import", str(FIXTURES / "chatgpt" / "conversations.json"), "--out", str(work / "me.jsonl")]) == 0
    assert main(["probes", "plant", str(work / "me.jsonl"), "--n", "30", "--out", str(work / "planted.jsonl")]) == 0
    (work / "grid.toml").write_text(GRID, encoding="utf-8")
    assert main(["run", str(work / "grid.toml"), "--run-dir", str(work / "run"), "--quiet"]) == 0
    return work


def _show(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["show", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_show_takes_the_unique_end_of_a_planted_probe_id(planted_run, capsys):
    run = str(planted_run / "run")
    full = run_probes(planted_run / "run")[0].probe_id
    assert full.endswith(":planted-q001") and full != "planted-q001"  # <conversation>:planted-q001
    code, out, _ = _show(capsys, run, "planted-q001")
    assert code == 0 and out.startswith(f"probe {full} ")
    assert _show(capsys, run, full)[1] == out  # the full id shows the same


def test_an_ambiguous_end_lists_the_candidates_in_one_line(planted_run, capsys):
    code, out, err = _show(capsys, str(planted_run / "run"), "1")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "ambiguous" in err and ":planted-q001, " in err and ":planted-q011" in err


def test_show_without_an_id_lists_the_probe_ids_with_their_questions(planted_run, capsys):
    code, out, _ = _show(capsys, str(planted_run / "run"))
    probes = run_probes(planted_run / "run")
    lines = out.splitlines()
    listed = [line for line in lines if line.startswith("  ") and line.split()[0].endswith(tuple(p.probe_id for p in probes))]
    assert code == 0 and lines[0].startswith(f"{len(probes)} probes in ") and len(listed) == len(probes)
    assert probes[0].probe_id.endswith(":planted-q001") and probes[0].question
    assert listed[0].split(None, 1) == [probes[0].probe_id, probes[0].question]


def test_resolve_probe_id_prefers_the_exact_id_then_a_unique_end():
    known = ["a:q1", "b:q1", "q1", "a:q2"]
    assert resolve_probe_id(known, "q1") == "q1"  # exact, though two others end with it
    assert resolve_probe_id(known, "q2") == "a:q2"
    with pytest.raises(ConfigError, match=r"ambiguous: 2 ids end with it \(a:xq3, b:xq3\)"):
        resolve_probe_id(["a:xq3", "b:xq3"], "xq3")
    with pytest.raises(ConfigError, match="did you mean 'a:q2'"):
        resolve_probe_id(known, "a:q3")


class _Terminal(io.StringIO):
    """A stdin that is a terminal, with the user's answer queued."""

    def isatty(self) -> bool:
        return True


def _fresh(planted_run: Path) -> int:
    return main(["run", str(planted_run / "grid.toml"), "--run-dir", str(planted_run / "run"), "--quiet",
                 "--fresh"])


def _rows(planted_run: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (planted_run / "run" / "rows").glob("*.jsonl")}


def test_fresh_off_a_terminal_needs_yes_one_line_exit_2_nothing_deleted(planted_run, capsys):
    before = _rows(planted_run)
    assert before and not sys.stdin.isatty()
    assert _fresh(planted_run) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: --fresh would delete 1 finished cell, ")
    assert "--yes" in err and "report" in err
    assert _rows(planted_run) == before and (planted_run / "run" / "report" / "report.html").exists()


def test_fresh_on_a_terminal_asks_and_deletes_only_after_a_yes(planted_run, capsys, monkeypatch):
    before = _rows(planted_run)
    monkeypatch.setattr(sys, "stdin", _Terminal("n\n"))
    assert _fresh(planted_run) == 2
    captured = capsys.readouterr()
    assert "--fresh deletes 1 finished cell" in captured.out and "Delete and start over? [y/N]" in captured.out
    assert "nothing deleted" in captured.err and _rows(planted_run) == before
    monkeypatch.setattr(sys, "stdin", _Terminal("y\n"))
    assert _fresh(planted_run) == 0
    after = _rows(planted_run)
    assert after.keys() == before.keys() and all(after[name] != before[name] for name in before)  # run again
