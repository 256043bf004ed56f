"""Argument checks shared by the commands: each failure is one line (a ``UsageError``, or a ``ConfigError`` for a bad value)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TypeAlias

from lyra_lab._registry import ConfigError
from lyra_lab.runs import read_cell_rows
from lyra_lab.commands._errors import UsageError

# what each subcommand's add_parser(subparsers) is handed: argparse's sub-parser action (typeshed's name)
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

NOT_A_RUN = "not a lyra-lab run folder, or one made by a newer version of lyra-lab"


def at_least_one(args: argparse.Namespace, *flags: str) -> None:
    """Each of ``flags`` (names in ``args``; ``None`` where not given) is at least 1, else one ``ConfigError`` line.

    The line names the option as typed: ``at_least_one(args, "max_tokens")`` fails with
    ``--max-tokens must be >= 1, got 0``.
    """
    for flag in flags:
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise ConfigError(f"--{flag.replace('_', '-')} must be >= 1, got {value}")


def input_file(path: str | Path, what: str = "file") -> Path:
    """``path`` as an existing, readable file (not a folder)."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{what} {p} does not exist")
    if p.is_dir():
        raise UsageError(f"{what} {p} is a folder; give a file")
    return p


def run_folder(path: str | Path, *, must_exist: bool, fresh: bool = False) -> Path:
    """``path`` as a run folder: a folder (or nothing yet, unless ``must_exist``) whose records lyra-lab can read.

    A run folder of a schema version this lyra-lab cannot read (``lyra-run.json``)
    fails here, as do a ``spec.json`` that is not a JSON object and row files that
    are not JSON objects (someone else's folder), rather than half-way through.
    ``fresh`` (the run starts the folder over) skips reading what is there.
    """
    p = Path(path)
    if not p.exists():
        if must_exist:
            raise UsageError(f"run folder {p} does not exist")
        return p
    if not p.is_dir():
        raise UsageError(f"run folder {p} is a file, not a folder")
    if fresh:
        return p
    from lyra_lab.runs import schema_version

    schema_version(p)  # a ConfigError naming the folder, its version and the supported one
    spec = p / "spec.json"
    if spec.exists():
        try:
            data = json.loads(spec.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            raise UsageError(f"{p}: {NOT_A_RUN} (cannot read spec.json)")
    rows = p / "rows"
    if rows.exists() and not rows.is_dir():
        raise UsageError(f"{p}: {NOT_A_RUN} (rows is not a folder)")
    for file in sorted(rows.glob("*.jsonl")) if rows.is_dir() else ():
        _check_rows(p, file)
    if must_exist and not spec.exists() and not (p / "results.parquet").exists() and not any(rows.glob("*.jsonl")):
        raise UsageError(f"{p}: {NOT_A_RUN} (no spec.json, rows/ or results.parquet)")
    return p


def _check_rows(run: Path, file: Path) -> None:
    try:
        read_cell_rows(file, ValueError)  # "<file>: line N: not valid JSON (…)", "…: the file is cut short …"
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        reason = str(exc) if str(exc).startswith(str(file)) else f"{file}: unreadable: {exc}"
        raise UsageError(f"{reason}; {run} is {NOT_A_RUN}, or the file is corrupt") from None


def check_parquet(run: Path) -> None:
    """A results.parquet that pyarrow cannot open is corrupt: say so, and how to rebuild it."""
    parquet = run / "results.parquet"
    if not parquet.exists():
        return
    try:
        import pyarrow.parquet as pq

        pq.read_schema(parquet)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several kinds for a damaged file
        rows = "delete it to rebuild it from rows/" if any((run / "rows").glob("*.jsonl")) else "rerun the experiment"
        raise UsageError(f"{parquet}: corrupt or not a Parquet file ({type(exc).__name__}); {rows}") from None


def confirm_fresh(run_dir: Path, yes: bool) -> None:
    """Before ``--fresh`` deletes a run folder's finished work: ask on a terminal; off one, need ``yes``.

    Finished work is finished cells' rows, ``results.parquet`` and the report.  A folder without any
    (new, or a start that failed) is started over without asking.

    Raises:
        ConfigError: off a terminal without ``yes`` (one line; nothing deleted), or the user did not agree.
    """
    import sys

    from lyra_lab._terminal import count

    cells = len(list((run_dir / "rows").glob("*.jsonl"))) if (run_dir / "rows").is_dir() else 0
    work = ([count(cells, "finished cell")] if cells else []) + \
        [name for name in ("results.parquet", "report") if (run_dir / name).exists()]
    if yes or not work:
        return
    what = f"{', '.join(work)} in {run_dir}"
    if not sys.stdin.isatty():
        raise ConfigError(f"--fresh would delete {what}: pass --yes as well to delete them, "
                          "or leave out --fresh to resume")
    answer = input(f"--fresh deletes {what}. Delete and start over? [y/N] ")
    if answer.strip().lower() not in ("y", "yes"):
        raise ConfigError(f"nothing deleted in {run_dir} (leave out --fresh to resume)")


def bars_show() -> bool:
    """Whether progress bars show on stderr: a terminal with a width.

    Off a terminal, and on a pseudo-terminal of 0 columns (some harnesses and ``script`` without a
    terminal give one), tqdm's bars print nothing: the commands print the run's status lines instead.
    """
    import os
    import sys

    try:
        return sys.stderr.isatty() and os.get_terminal_size(sys.stderr.fileno()).columns > 0
    except (AttributeError, OSError, ValueError):
        return False
