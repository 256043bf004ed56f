"""A run planted in another language than its history says so wherever its figures appear: run, view, compare."""

from __future__ import annotations

from pathlib import Path


from lyra_lab.cli import main

KOREAN = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "chatgpt" / "korean.json"
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
SAID = "⚠ warning: korean: planted text is in English but this history is mostly Korean"


def planted_run(work: Path, capsys, language: str) -> str:
    work.mkdir()
    assert main(["probes", "plant", str(KOREAN), "--n", "10", "--language", language,
                 "--out", str(work / "planted.jsonl")]) == 0
    (work / "grid.toml").write_text(GRID, encoding="utf-8")
    capsys.readouterr()
    assert main(["run", str(work / "grid.toml"), "--run-dir", str(work / "run")]) == 0
    return capsys.readouterr().out




def test_the_warning_reaches_run_view_and_compare(tmp_path, capsys):
    out = planted_run(tmp_path / "en", capsys, "en")
    assert SAID in out and all(len(line) <= 100 for line in out.splitlines() if line.startswith("⚠ warning"))
    assert main(["view", str(tmp_path / "en" / "run")]) == 0
    printed = capsys.readouterr().out
    assert "best" in printed and SAID in printed
    page = (tmp_path / "en" / "run" / "index.html").read_text(encoding="utf-8")
    assert "⚠ planted language" in page and "planted text is in English" in page
    assert main(["compare", str(tmp_path / "en" / "run"), "--resamples", "50"]) == 0
    assert SAID in capsys.readouterr().out
    assert main(["export", str(tmp_path / "en" / "run"), "--out", str(tmp_path / "en.zip")]) == 0
    assert SAID in capsys.readouterr().out


def test_a_run_planted_in_its_own_language_has_no_warning(tmp_path, capsys):
    out = planted_run(tmp_path / "ko", capsys, "auto")
    assert "⚠ warning" not in out
    assert main(["view", str(tmp_path / "ko" / "run")]) == 0
    assert "⚠ warning" not in capsys.readouterr().out
