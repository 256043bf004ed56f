r"""Claude.ai data export (``conversations.json``, alone or inside the export ``.zip``).

The export is a JSON list of chats: ``{uuid, name, created_at, chat_messages}``;
each message has ``uuid``, ``sender`` (``human`` / ``assistant``), ISO
``created_at`` and its words either in ``content`` (a list of blocks, of which
the ``type: "text"`` ones are kept; tool use, tool results and ``thinking`` are
not) or, in older exports, in ``text``.

One Conversation per export (id = file stem or the ``name`` given), one Session
per chat (id = chat ``uuid``, title = chat ``name``), sessions ordered by
``created_at``.  Turn ids are message uuids.  Chats and messages with no text
are skipped and counted (``Conversation.meta["empty_chats"]``,
``Session.meta["skipped"]``); attachment file names go to ``Turn.meta``.

Attachments: each ``attachments[k]`` with ``extracted_content`` becomes its own
turn right after its message, id ``<message uuid>:attachment:<k>``, text
``"[attachment: <file_name>]\n<content>"``, the sender's role and
``meta = {"part": "attachment", "file_name", "attached_to"}``.
``include_attachments=False`` leaves them out (file names stay in the meta).

Older exports list messages out of time order and flatten edits and
regenerations (no parent links).  Messages are stably sorted by ``created_at``
(a message without one keeps the place after its predecessor; on a tie the
human message goes first, so a question stays before its answer), and
``Session.meta["reordered"]`` counts the messages that moved.  Two assistant
messages in a row, or two human messages in a row within a minute of each other,
are a flattened regeneration or edit: the later turn gets
``meta["regeneration_of"] = <earlier id>``, the earlier ``meta["regenerated"] =
True``; both are kept and ``Session.meta["regenerations"]`` counts them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from datetime import datetime
from typing import Any

from lyra_lab.corpus._json_util import Fields, jpath
from lyra_lab.corpus._model import Conversation, Probe, Role, Session, Turn

SENDERS: dict[str, Role] = {"human": "user", "assistant": "assistant"}
REGENERATION_WINDOW_S = 60  # two human messages in a row this close are one edited question


def looks_like(doc: object) -> bool:
    return isinstance(doc, list) and bool(doc) and isinstance(doc[0], dict) and "chat_messages" in doc[0]


def parse(path: str, doc: object, name: str, *, include_attachments: bool = True
          ) -> tuple[tuple[Conversation, ...], tuple[Probe, ...]]:
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
        session = _session(f, f.obj(raw, where), where, name, include_attachments)
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


@dataclass
class _Message:
    where: str
    id: str
    role: Role
    text: str
    stamp: datetime | None
    attachments: list[tuple[str | None, str]]  # (file name, extracted text)
    file_names: list[str]
    meta: dict[str, Any] = field(default_factory=dict)


def _session(f: Fields, chat: dict[str, Any], where: str, name: str, include_attachments: bool) -> Session:
    sid = f.text(chat, "uuid", where)
    raw_messages = f.get(chat, "chat_messages", where, list)
    messages = [_message(f, f.obj(raw, jpath(jpath(where, "chat_messages"), j)),
                         jpath(jpath(where, "chat_messages"), j))
                for j, raw in enumerate(raw_messages)]
    ordered = _time_order(messages)
    reordered = sum(a is not b for a, b in zip(messages, ordered, strict=True))
    regenerations = _mark_regenerations(ordered)
    turns: list[Turn] = []
    skipped = 0
    for msg in ordered:
        if msg.text.strip():
            meta = dict(msg.meta)
            if msg.file_names:
                meta["attachments"] = msg.file_names
            turns.append(Turn(id=msg.id, conversation_id=name, session_id=sid, role=msg.role, text=msg.text,
                              timestamp=msg.stamp, meta=meta))
        else:
            skipped += 1
        if include_attachments:
            for k, (file_name, content) in enumerate(msg.attachments):
                label = f"[attachment: {file_name}]" if file_name else "[attachment]"
                turns.append(Turn(id=f"{msg.id}:attachment:{k}", conversation_id=name, session_id=sid,
                                  role=msg.role, text=f"{label}\n{content}", timestamp=msg.stamp,
                                  meta={"part": "attachment", "file_name": file_name, "attached_to": msg.id}))
    started = f.time(f.get(chat, "created_at", where, (str, int, float), required=False),
                     jpath(where, "created_at"))
    session_meta: dict[str, Any] = {"skipped": {"empty": skipped}} if skipped else {}
    if reordered:
        session_meta["reordered"] = reordered
    if regenerations:
        session_meta["regenerations"] = regenerations
    return Session(id=sid, conversation_id=name, turns=tuple(turns),
                   title=f.text(chat, "name", where, required=False) or None, started_at=started, meta=session_meta)


def _time_order(messages: list[_Message]) -> list[_Message]:
    """Stable sort by time; an undated message sorts with the one before it, a human before an assistant."""
    keys = []
    last: float = float("-inf")
    for n, msg in enumerate(messages):
        if msg.stamp is not None:
            last = msg.stamp.timestamp()
        keys.append((last, msg.role != "user", n))
    order = sorted(range(len(messages)), key=keys.__getitem__)
    return [messages[n] for n in order]


def _mark_regenerations(messages: list[_Message]) -> int:
    count = 0
    for before, after in pairwise(messages):
        if before.role != after.role:
            continue
        if before.role == "user" and not _close_in_time(before, after):
            continue
        after.meta["regeneration_of"] = before.id
        before.meta["regenerated"] = True
        count += 1
    return count


def _close_in_time(a: _Message, b: _Message) -> bool:
    if a.stamp is None or b.stamp is None:
        return a.stamp is b.stamp
    return abs((b.stamp - a.stamp).total_seconds()) <= REGENERATION_WINDOW_S


def _message(f: Fields, msg: dict[str, Any], where: str) -> _Message:
    mid = f.text(msg, "uuid", where)
    sender = f.text(msg, "sender", where)
    if sender not in SENDERS:
        raise f.error(jpath(where, "sender"), f"unknown sender {sender!r} (expected human or assistant)")
    text = _text(f, msg, where)
    stamp = f.time(f.get(msg, "created_at", where, (str, int, float), required=False), jpath(where, "created_at"))
    attachments: list[tuple[str | None, str]] = []
    names: list[str] = []
    for key in ("attachments", "files"):
        for k, item in enumerate(f.get(msg, key, where, list, required=False) or []):
            item = f.obj(item, jpath(jpath(where, key), k))
            file_name = f.text(item, "file_name", jpath(jpath(where, key), k), required=False)
            if file_name:
                names.append(file_name)
            content = item.get("extracted_content")
            if key == "attachments" and isinstance(content, str) and content.strip():
                attachments.append((file_name, content))
    return _Message(where, mid, SENDERS[sender], text, stamp, attachments, names)
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
