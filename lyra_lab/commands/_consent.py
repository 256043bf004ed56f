"""Asking before a command does something a user should agree to: sending text away, a long or costly run.

``agree(notice, question, yes, refusal)`` prints the notice to stderr, and unless ``--yes`` was
given asks the question on a terminal; off a terminal (a script, CI) it does not block on a
prompt nobody can answer: it stops with one line saying to pass ``--yes``.

``remote_agreed`` / ``remember_remote`` keep, in the user cache, which endpoints a user agreed to
send a corpus to (endpoint + corpus hash), so a run asks the first time only.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

from lyra_lab._atomic import write_whole
from lyra_lab._registry import ConfigError


def agree(notice: str, question: str, yes: bool, refusal: str) -> None:
    """Print ``notice``; go on with ``yes`` or a "y" at the prompt, else raise ``ConfigError(refusal)``.

    Raises:
        ConfigError: no agreement (also when stdin is not a terminal and ``yes`` is false).
    """
    print(f"notice: {notice}", file=sys.stderr)
    if yes:
        return
    answer = input(f"{question} [y/N] ") if sys.stdin.isatty() else ""
    if answer.strip().lower() not in ("y", "yes"):
        raise ConfigError(refusal)


def _consent_path() -> Path:
    from lyra_lab.backends import cache_dir

    return cache_dir() / "consent.json"


def remote_agreed(endpoint: str, corpus_sha256: str) -> bool:
    """Whether the user agreed before to send this corpus's text to ``endpoint``."""
    try:
        kept = json.loads(_consent_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(kept, dict) and f"{endpoint} {corpus_sha256}" in kept


def remember_remote(endpoint: str, corpus_sha256: str) -> None:
    """Keep that the user agreed to send this corpus's text to ``endpoint`` (with the date)."""
    path = _consent_path()
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        kept = {}
    kept[f"{endpoint} {corpus_sha256}"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    write_whole(path, json.dumps(kept, indent=1, sort_keys=True))
