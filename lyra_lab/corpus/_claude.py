"""Claude.ai data export (``conversations.json``, alone or inside the export ``.zip``).

The export is a JSON list of chats: ``{uuid, name, created_at, chat_messages}``;
each message has ``uuid``, ``sender`` (``human`` / ``assistant``), ISO
``created_at`` and its words either in ``content`` (a list of blocks, of which
the ``type: "text"`` ones are kept, tool use and results are not) or, in older
exports, in ``text``.

One Conversation per export (id = file stem or the ``name`` given), one Session
per chat (id = chat ``uuid``, title = chat ``name``), sessions ordered by
``created_at``.  Turn ids are message uuids.  Chats and messages with no text
are skipped and counted (``Conversation.meta["empty_chats"]``,
``Session.meta["skipped"]``); attachment file names go to ``Turn.meta``.
"""

from __future__ import annotations

from typing import Any

from lyra_lab.corpus._json_util import Fields, jpath
from lyra_lab.corpus._model import Conversation, Probe, Session, Turn

SENDERS = {"human": "user", "assistant": "assistant"}


def looks_like(doc: Any) -> bool:
    return isinstance(doc, list) and bool(doc) and isinstance(doc[0], dict) and "chat_messages" in doc[0]


def parse(path: str, doc: Any, name: str) -> tuple[tuple[Conversation, ...], tuple[Probe, ...]]:
    """Parse a Claude.ai export document into one Conversation named ``name``."""
    f = Fields(path)
    chats = f.items(doc, "$")
    if not chats:
        raise f.error("$", "no conversations in the export")
    sessions: list[Session] = []
    seen: dict[str, str] = {}
    empty = 0
    for i, raw in enumerate(chats):
        where = f"$[{i}]"
        session = _session(f, f.obj(raw, where), where, name)
        for ident, place in [(session.id, jpath(where, "uuid"))] + [(t.id, where) for t in session.turns]:
            if ident in seen:
                raise f.error(place, f"uuid {ident!r} repeats one in {seen[ident]}")
            seen[ident] = where
        if session.turns:
            sessions.append(session)
        else:
            empty += 1
    if not sessions:
        raise f.error("$", "no messages with text in any conversation")
    sessions.sort(key=lambda s: (s.started_at is None, s.started_at.timestamp() if s.started_at else 0.0))
    meta = {"source_format": "claude", "empty_chats": empty}
    return (Conversation(id=name, sessions=tuple(sessions), meta=meta),), ()


def _session(f: Fields, chat: dict[str, Any], where: str, name: str) -> Session:
    sid = f.text(chat, "uuid", where)
    messages = f.get(chat, "chat_messages", where, list)
    turns = []
    skipped = 0
    for j, raw in enumerate(messages):
        mwhere = jpath(jpath(where, "chat_messages"), j)
        turn = _turn(f, f.obj(raw, mwhere), mwhere, name, sid)
        if turn is None:
            skipped += 1
        else:
            turns.append(turn)
    started = f.time(f.get(chat, "created_at", where, (str, int, float), required=False),
                     jpath(where, "created_at"))
    meta = {"skipped": {"empty": skipped}} if skipped else {}
    return Session(id=sid, conversation_id=name, turns=tuple(turns),
                   title=f.text(chat, "name", where, required=False) or None, started_at=started, meta=meta)


def _turn(f: Fields, msg: dict[str, Any], where: str, conv_id: str, session_id: str) -> Turn | None:
    mid = f.text(msg, "uuid", where)
    sender = f.text(msg, "sender", where)
    if sender not in SENDERS:
        raise f.error(jpath(where, "sender"), f"unknown sender {sender!r} (expected human or assistant)")
    text = _text(f, msg, where)
    if not text.strip():
        return None
    stamp = f.time(f.get(msg, "created_at", where, (str, int, float), required=False), jpath(where, "created_at"))
    meta: dict[str, Any] = {}
    names = [a.get("file_name") for a in (msg.get("attachments") or []) + (msg.get("files") or [])
             if isinstance(a, dict) and isinstance(a.get("file_name"), str)]
    if names:
        meta["attachments"] = names
    return Turn(id=mid, conversation_id=conv_id, session_id=session_id, role=SENDERS[sender],
                text=text, timestamp=stamp, meta=meta)


def _text(f: Fields, msg: dict[str, Any], where: str) -> str:
    # Newer exports split a message into typed blocks; the flat "text" field then
    # also holds tool chatter, so the text blocks win when there are any.
    blocks = msg.get("content")
    if blocks is not None:
        blocks = f.items(blocks, jpath(where, "content"))
        texts = []
        for k, block in enumerate(blocks):
            block = f.obj(block, jpath(jpath(where, "content"), k))
            if block.get("type") == "text":
                texts.append(f.text(block, "text", jpath(jpath(where, "content"), k), required=False) or "")
        joined = "\n\n".join(t for t in texts if t)
        if joined:
            return joined
    return f.text(msg, "text", where, required=False) or ""
