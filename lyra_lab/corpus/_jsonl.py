"""Generic JSONL: one message per line, for exports of any other chat system.

Each line is an object::

    {"conversation_id"?, "session_id", "role", "content", "timestamp"?, "id"?, "speaker"?, ...}

* ``role`` (case-insensitive): ``user`` / ``assistant``; aliases ``human`` → user and ``ai``,
  ``bot`` → assistant.  Anything else is an error naming the line.
* ``timestamp``: ISO 8601 (no offset = UTC) or Unix epoch seconds.
* ``conversation_id`` defaults to the file stem (or the ``name`` given);
  ``id`` defaults to ``<session_id>:<k>`` with ``k`` the 1-based position in
  its session.  Ids must be unique within a conversation.
* Any other keys are kept in ``Turn.meta``.

Conversations and sessions keep the order of their first line; turns keep file
order.  A session's ``started_at`` is its earliest timestamp.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable

from lyra_lab.corpus._json_util import Fields, TurnKey, parse_time, type_name
from lyra_lab.corpus._model import Conversation, Probe, Role, Session, Turn

ROLE_ALIASES: dict[str, Role] = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "bot": "assistant"}
KNOWN_KEYS = {"conversation_id", "session_id", "role", "content", "timestamp", "id", "speaker"}


def looks_like(record: object) -> bool:
    return isinstance(record, dict) and "role" in record and "content" in record


def parse(path: str, lines: Iterable[str], name: str) -> tuple[tuple[Conversation, ...], tuple[Probe, ...]]:
    """Parse message lines into conversations of sessions; errors name the line."""
    f = Fields(path)
    # conversation id -> session id -> turns, both in order of first appearance
    convs: dict[str, dict[str, list[Turn]]] = {}
    id_lines: dict[tuple[str, str], int] = {}
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        where = f"line {n}"
        rec = f.json_line(raw, where)
        cid = _ident(f, rec, "conversation_id", where, default=name)
        sid = _ident(f, rec, "session_id", where)
        sessions = convs.setdefault(cid, {})
        turns = sessions.setdefault(sid, [])
        tid = _ident(f, rec, "id", where, default=f"{sid}:{len(turns) + 1}")
        if (cid, tid) in id_lines:
            raise f.error(where, f"id {tid!r} repeats line {id_lines[(cid, tid)]} in conversation {cid!r}")
        id_lines[(cid, tid)] = n
        turns.append(_turn(f, rec, where, TurnKey(tid, cid, sid)))
    if not convs:
        raise f.error("", "no messages (the file is empty)")
    conversations = tuple(
        Conversation(id=cid, sessions=tuple(
            Session(id=sid, conversation_id=cid, turns=tuple(turns), started_at=_earliest(turns))
            for sid, turns in sessions.items()))
        for cid, sessions in convs.items())
    return conversations, ()


def _ident(f: Fields, rec: dict[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = rec.get(key)
    if value is None:
        if default is None:
            raise f.error(where, f"missing required field {key!r}")
        return default
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        raise f.error(where, f"{key!r} must be a non-empty string or integer, got {value!r}")
    return str(value)


def _turn(f: Fields, rec: dict[str, Any], where: str, key: TurnKey) -> Turn:
    tid, cid, sid = key
    role = rec.get("role")
    if role is None:
        raise f.error(where, "missing required field 'role'")
    canonical = ROLE_ALIASES.get(role.lower()) if isinstance(role, str) else None
    if canonical is None:
        raise f.error(where, f"unknown role {role!r} (expected user/human or assistant/ai/bot)")
    content = rec.get("content")
    if not isinstance(content, str):
        problem = "missing required field 'content'" if content is None else \
            f"'content' must be a string, got {type_name(content)}"
        raise f.error(where, problem)
    speaker = rec.get("speaker")
    if speaker is not None and not isinstance(speaker, str):
        raise f.error(where, f"'speaker' must be a string, got {type_name(speaker)}")
    try:
        stamp = None if rec.get("timestamp") is None else parse_time(rec["timestamp"])
    except (TypeError, ValueError, OverflowError, OSError) as exc:
        raise f.error(where, f"'timestamp': {exc}") from None
    meta = {k: v for k, v in rec.items() if k not in KNOWN_KEYS}
    return Turn(id=tid, conversation_id=cid, session_id=sid, role=canonical, text=content, timestamp=stamp,
                speaker=speaker, meta=meta)


def _earliest(turns: list[Turn]) -> datetime | None:
    stamps = [t.timestamp for t in turns if t.timestamp is not None]
    return min(stamps) if stamps else None
