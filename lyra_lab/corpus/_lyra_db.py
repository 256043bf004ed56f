"""Lyra's SQLite memory database, opened read-only.

Tables read (other tables and columns, e.g. ``embedding``, are ignored)::

    sessions(id, name, created_at)
    exchanges(id, session_id, role, content, embedding, created_at)
    summaries(session_id, content, last_exchange_id, ...)      -- optional

One Conversation (id = file stem or the ``name`` given); one Session per
``sessions`` row with exchanges, ordered by ``created_at`` then id; turns are
the session's exchanges by ``id`` (turn id = the exchange id as text).  The
newest summary of a session (highest ``last_exchange_id``) becomes
``Session.gist``, with ``meta["gist_last_exchange_id"]`` saying how far it
reaches.  Times may be ISO text (``2024-05-01 10:00:00``, taken as UTC) or epoch
seconds.  The file is opened with ``mode=ro`` so an import can never change it.
"""

from __future__ import annotations

import re
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

from lyra_lab.corpus._json_util import parse_time
from lyra_lab.corpus._jsonl import ROLE_ALIASES
from lyra_lab.corpus._model import Conversation, CorpusFormatError, Probe, Session, Turn

MAGIC = b"SQLite format 3\x00"
REQUIRED = {"sessions": ("id", "name", "created_at"),
            "exchanges": ("id", "session_id", "role", "content", "created_at")}
SUMMARY_COLUMNS = ("session_id", "content", "last_exchange_id")
_EPOCH = re.compile(r"\s*\d+(\.\d+)?\s*\Z")


def looks_like(head: bytes) -> bool:
    return head.startswith(MAGIC)


def parse(path: str | Path, name: str) -> tuple[tuple[Conversation, ...], tuple[Probe, ...]]:
    """Read a Lyra memory DB into one Conversation named ``name``."""
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise CorpusFormatError(path, "", f"cannot open as SQLite: {exc}") from None
    try:
        return _read(db, str(path), name)
    except sqlite3.Error as exc:
        raise CorpusFormatError(path, "", f"SQLite error: {exc}") from None
    finally:
        db.close()


def _read(db: sqlite3.Connection, path: str, name: str) -> tuple[tuple[Conversation, ...], tuple[Probe, ...]]:
    tables = _columns(db)
    for table, cols in REQUIRED.items():
        if table not in tables:
            raise CorpusFormatError(path, f"table {table}", "missing: not a Lyra memory DB "
                                    f"(tables found: {', '.join(sorted(tables)) or 'none'})")
        missing = [c for c in cols if c not in tables[table]]
        if missing:
            raise CorpusFormatError(path, f"table {table}", f"missing column(s) {', '.join(missing)}")
    sessions = {}
    for sid, title, created in db.execute("SELECT id, name, created_at FROM sessions"):
        sessions[str(sid)] = {"title": title, "start": _time(path, created, f"sessions[id={sid}].created_at"),
                              "turns": []}
    rows = db.execute("SELECT id, session_id, role, content, created_at FROM exchanges ORDER BY id")
    for eid, sid, role, content, created in rows:
        where = f"exchanges[id={eid}]"
        session = sessions.get(str(sid))
        if session is None:
            raise CorpusFormatError(path, f"{where}.session_id", f"session {sid!r} is not in table sessions")
        canonical = ROLE_ALIASES.get(role.lower()) if isinstance(role, str) else None
        if canonical is None:
            raise CorpusFormatError(path, f"{where}.role", f"unknown role {role!r} (expected user or assistant)")
        if not isinstance(content, str):
            raise CorpusFormatError(path, f"{where}.content", f"expected text, got {content!r:.40}")
        session["turns"].append(Turn(id=str(eid), conversation_id=name, session_id=str(sid), role=canonical,
                                     text=content, timestamp=_time(path, created, f"{where}.created_at")))
    gists = _gists(db, tables) if "summaries" in tables else {}
    built = []
    for sid, s in sessions.items():
        if not s["turns"]:
            continue
        gist, upto = gists.get(sid, (None, None))
        meta = {"gist_last_exchange_id": upto} if gist is not None else {}
        start = s["start"] or s["turns"][0].timestamp
        built.append(Session(id=sid, conversation_id=name, turns=tuple(s["turns"]), title=s["title"],
                             started_at=start, gist=gist, meta=meta))
    if not built:
        raise CorpusFormatError(path, "table exchanges", "no exchanges: nothing to import")
    built.sort(key=lambda s: (s.started_at is None, s.started_at.timestamp() if s.started_at else 0.0))
    return (Conversation(id=name, sessions=tuple(built), meta={"source_format": "lyra_db"}),), ()


def _columns(db: sqlite3.Connection) -> dict[str, set[str]]:
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")]
    return {n: {r[1] for r in db.execute(f'PRAGMA table_info("{n}")')} for n in names}


def _gists(db: sqlite3.Connection, tables: dict[str, set[str]]) -> dict[str, tuple[str, Any]]:
    if any(c not in tables["summaries"] for c in SUMMARY_COLUMNS):
        return {}
    latest: dict[str, tuple[str, Any]] = {}
    # newest last: later rows overwrite earlier ones for the same session
    rows = db.execute("SELECT session_id, content, last_exchange_id FROM summaries "
                      "WHERE content IS NOT NULL ORDER BY last_exchange_id, rowid")
    for sid, content, upto in rows:
        latest[str(sid)] = (str(content), upto)
    return latest


def _time(path: str, value: object, where: str) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, str) and _EPOCH.match(value):
        value = float(value)  # a TEXT column turns stored epoch numbers into strings
    try:
        return parse_time(value)
    except (TypeError, ValueError, OverflowError, OSError) as exc:
        raise CorpusFormatError(path, where, str(exc)) from None
