"""How the CLI turns any failure into one line on stderr (and exit code 2).

Expected failures (bad arguments, missing or unreadable files, bad configs,
unreachable backends) print their message, reworded in the CLI's own words
(--format, not format=).  Anything else is a bug or an environment
problem: the line names what failed and where its traceback was written (the
run's log.jsonl when the command has a run folder, else a temporary file).
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import tempfile
import traceback
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

EXIT_USAGE = 2

# library wording → CLI wording
_REWORDS = (
    (re.compile(r"\bpass format= to force one"), "pass --format to force one"),
    (re.compile(r"\bformat="), "--format "),
    (re.compile(r"\bn_resamples\b"), "--resamples"),
)
_UNKNOWN_NAME = re.compile(r"unknown ([\w ]+?) '([^']*)'; known: ([^;()]*)")


class UsageError(Exception):
    """A bad command line: printed as one line, exit code 2."""


def suggest(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'hybrid'?"`` for the closest choice, or ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def expected_errors() -> tuple[type[BaseException], ...]:
    import tomllib

    from lyra_lab._registry import ConfigError
    from lyra_lab.backends import BackendError
    from lyra_lab.corpus import CorpusFormatError
    from lyra_lab.runs import ResultsFormatError

    return (UsageError, ConfigError, CorpusFormatError, ResultsFormatError, BackendError, OSError,
            tomllib.TOMLDecodeError, UnicodeDecodeError)


def message_of(exc: BaseException) -> str:
    """The user-facing text of an expected error, in CLI words and with a suggestion for a typo."""
    if isinstance(exc, OSError) and exc.filename is not None:
        # a rename names its target second: that is the path the user gave
        text = f"{exc.filename2 if exc.filename2 is not None else exc.filename}: {_os_reason(exc)}"
    elif isinstance(exc, UnicodeDecodeError):
        text = f"not UTF-8 text ({exc.reason} at byte {exc.start})"
    else:
        text = str(exc).strip() or type(exc).__name__
        if isinstance(exc, KeyError) and text.startswith(("'", '"')):
            text = text[1:-1]
    for pattern, replacement in _REWORDS:
        text = pattern.sub(replacement, text)
    unknown = _UNKNOWN_NAME.search(text)
    if unknown and "did you mean" not in text:
        names = [n.strip() for n in unknown.group(3).split(",")]
        text = text[:unknown.end()] + suggest(unknown.group(2), names) + text[unknown.end():]
    return text


def _os_reason(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "does not exist"
    if isinstance(exc, IsADirectoryError):
        return "is a folder, not a file"
    if isinstance(exc, NotADirectoryError):
        return "is a file, not a folder"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return exc.strerror or str(exc)


def one_line(text: str, exc: BaseException, args: argparse.Namespace | None) -> str:
    """The first line of ``text``; the rest (a server's log tail, say) goes to a log file."""
    first, _, rest = text.partition("\n")
    if not rest.strip():
        return first
    path = _write_log(exc, args, details=rest)
    return f"{first} (details in {path})"


def report_failure(exc: BaseException, args: argparse.Namespace | None) -> str:
    """The one line to print for ``exc``; writes a traceback for unexpected errors."""
    if isinstance(exc, expected_errors()):
        return "error: " + one_line(message_of(exc), exc, args)
    command = getattr(args, "command", None) or "lyra-lab"
    path = _write_log(exc, args, details=None)
    summary = str(exc).splitlines()[0] if str(exc).strip() else ""
    return (f"error: lyra-lab {command} failed unexpectedly: {type(exc).__name__}"
            f"{': ' + summary if summary else ''} (traceback in {path})")


def _write_log(exc: BaseException, args: argparse.Namespace | None, details: str | None) -> Path:
    text = details if details is not None else "".join(traceback.format_exception(exc))
    log_path = getattr(args, "log_path", None)
    if log_path is not None and Path(log_path).parent.is_dir():
        try:
            event = {"event": "cli_error", "at": datetime.now(UTC).isoformat(),
                     "error": f"{type(exc).__name__}: {exc}", "traceback": text}
            with open(log_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
            return Path(log_path)
        except OSError:
            pass
    with tempfile.NamedTemporaryFile("w", prefix="lyra-lab-error-", suffix=".log", delete=False,
                                     encoding="utf-8") as fh:
        fh.write(text)
        return Path(fh.name)
