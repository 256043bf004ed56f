"""ChatGPT data export (``conversations.json``, alone or inside the export ``.zip``).

The export is a JSON list of conversations.  Each holds a ``mapping`` of nodes
(``{id, message, parent, children}``) forming a tree: every edit or
regeneration starts a new branch, and ``current_node`` is the leaf the user last
saw.  Only that visible thread is imported: walk from ``current_node`` up the
``parent`` links to the root, then reverse.

Skipped, and counted in ``Session.meta["skipped"]``:
  * ``hidden``: ``metadata.is_visually_hidden_from_conversation`` (custom
    instructions, context the app injects);
  * ``system`` and ``tool`` authors; assistant messages addressed to a tool
    (``recipient`` other than ``"all"``) count as ``tool`` too — the user never
    sees them as chat text;
  * ``non_text``: content other than ``text`` / ``multimodal_text`` (code cells,
    execution output, browsing, reasoning) and non-text parts (image and audio
    asset pointers) — the text parts of the same message are kept, and so are
    voice-mode ``audio_transcription`` parts, which hold the words said;
  * ``empty``: messages with no text left.

One Conversation per export (id = file stem or the ``name`` given; chats left
with no turns are counted in its ``meta["empty_chats"]``), one Session per
ChatGPT conversation (id = its ``conversation_id``/``id``, title kept),
sessions ordered by ``create_time`` (the export lists newest first).  Turn ids
are the mapping's node ids; ``create_time`` epochs become UTC datetimes.  Any
parent cycle in a mapping, on the visible thread or not, is an error.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from lyra_lab.corpus._json_util import Fields, jpath
from lyra_lab.corpus._model import Conversation, Probe, Session, Turn

KEPT_ROLES = {"user": "user", "assistant": "assistant"}
SKIPPED_ROLES = {"system": "system", "tool": "tool"}
TEXT_CONTENT = ("text", "multimodal_text")


def looks_like(doc: Any) -> bool:
    return isinstance(doc, list) and bool(doc) and isinstance(doc[0], dict) and "mapping" in doc[0]


def parse(path: str, doc: Any, name: str) -> tuple[tuple[Conversation, ...], tuple[Probe, ...]]:
    """Parse a ChatGPT export document into one Conversation named ``name``."""
    f = Fields(path)
    items = f.items(doc, "$")
    if not items:
        raise f.error("$", "no conversations in the export")
    sessions: list[Session] = []
    seen_sessions: dict[str, str] = {}
    seen_turns: dict[str, str] = {}
    empty = 0
    for i, raw in enumerate(items):
        where = f"$[{i}]"
        session = _session(f, f.obj(raw, where), where, name)
        if session.id in seen_sessions:
            raise f.error(jpath(where, "id"), f"conversation id {session.id!r} repeats {seen_sessions[session.id]}")
        seen_sessions[session.id] = where
        for turn in session.turns:
            if turn.id in seen_turns:
                raise f.error(where, f"message id {turn.id!r} also appears in {seen_turns[turn.id]}")
            seen_turns[turn.id] = where
        if session.turns:  # a chat with nothing visible left has nothing to remember
            sessions.append(session)
        else:
            empty += 1
    if not sessions:
        raise f.error("$", "no visible user or assistant messages in any conversation")
    sessions.sort(key=_start_key)
    meta = {"source_format": "chatgpt", "empty_chats": empty}
    return (Conversation(id=name, sessions=tuple(sessions), meta=meta),), ()


def _start_key(session: Session) -> tuple[bool, float]:
    start = session.started_at
    return (start is None, start.timestamp() if start else 0.0)


def _session(f: Fields, conv: dict[str, Any], where: str, name: str) -> Session:
    sid = f.text(conv, "conversation_id", where, required=False) or f.text(conv, "id", where, required=False)
    if not sid:
        raise f.error(jpath(where, "conversation_id"), "missing required field (nor is there an 'id')")
    mapping = f.obj(conv.get("mapping"), jpath(where, "mapping"))
    _check_acyclic(f, mapping, where)
    chain = _visible_chain(f, mapping, f.text(conv, "current_node", where), where)
    skipped: Counter[str] = Counter()
    turns = []
    for node_id in chain:
        turn = _turn(f, mapping[node_id], jpath(jpath(where, "mapping"), node_id), node_id, name, sid, skipped)
        if turn is not None:
            turns.append(turn)
    started = f.time(f.get(conv, "create_time", where, (int, float, str), required=False),
                     jpath(where, "create_time"))
    meta = {"pruned_nodes": len(mapping) - len(chain), "skipped": {k: n for k, n in sorted(skipped.items()) if n}}
    title = f.text(conv, "title", where, required=False)
    return Session(id=sid, conversation_id=name, turns=tuple(turns), title=title, started_at=started, meta=meta)


def _check_acyclic(f: Fields, mapping: dict[str, Any], where: str) -> None:
    """Any parent cycle, on the visible thread or an abandoned branch, means a corrupt file."""
    acyclic: set[str] = set()
    for start in mapping:
        path: list[str] = []
        node: Any = start
        while isinstance(node, str) and node in mapping and node not in acyclic:
            if node in path:
                loop = path[path.index(node):] + [node]
                # the link that closes the loop is the parent field of the last node walked
                raise f.error(jpath(jpath(jpath(where, "mapping"), path[-1]), "parent"),
                              "parent cycle (child → parent): " + " → ".join(loop))
            path.append(node)
            entry = mapping[node]
            node = entry.get("parent") if isinstance(entry, dict) else None
        acyclic.update(path)


def _visible_chain(f: Fields, mapping: dict[str, Any], current: str, where: str) -> list[str]:
    """Node ids from the root down to ``current`` (the mapping is known to be acyclic)."""
    chain: list[str] = []
    node_id: str | None = current
    came_from = jpath(where, "current_node")
    while node_id is not None:
        here = jpath(jpath(where, "mapping"), node_id)
        if node_id not in mapping:
            raise f.error(came_from, f"points to node {node_id!r}, which is not in the mapping")
        node = f.obj(mapping[node_id], here)
        chain.append(node_id)
        node_id = f.text(node, "parent", here, required=False)
        came_from = jpath(here, "parent")
    chain.reverse()
    return chain


def _turn(f: Fields, node: dict[str, Any], where: str, node_id: str, conv_id: str, session_id: str,
          skipped: Counter[str]) -> Turn | None:
    message = node.get("message")
    if message is None:  # the synthetic root node carries no message
        return None
    mwhere = jpath(where, "message")
    message = f.obj(message, mwhere)
    author = f.obj(message.get("author"), jpath(mwhere, "author"))
    role = f.text(author, "role", jpath(mwhere, "author"))
    if role in SKIPPED_ROLES:
        skipped[SKIPPED_ROLES[role]] += 1
        return None
    if role not in KEPT_ROLES:
        raise f.error(jpath(jpath(mwhere, "author"), "role"),
                      f"unknown author role {role!r} (expected user, assistant, system or tool)")
    metadata = message.get("metadata") or {}
    if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
        skipped["hidden"] += 1
        return None
    if message.get("recipient") not in (None, "all"):
        skipped["tool"] += 1
        return None
    text = _text(f, message, mwhere, skipped)
    if text is None:  # already counted as non_text
        return None
    if not text.strip():
        skipped["empty"] += 1
        return None
    stamp = f.time(f.get(message, "create_time", mwhere, (int, float, str), required=False),
                   jpath(mwhere, "create_time"))
    meta = {}
    if isinstance(metadata, dict) and isinstance(metadata.get("model_slug"), str):
        meta["model"] = metadata["model_slug"]
    return Turn(id=node_id, conversation_id=conv_id, session_id=session_id, role=KEPT_ROLES[role],
                text=text, timestamp=stamp, meta=meta)


def _text(f: Fields, message: dict[str, Any], where: str, skipped: Counter[str]) -> str | None:
    """The message's visible text; None when its whole content is of a non-text type."""
    content = message.get("content")
    if content is None:
        return ""
    content = f.obj(content, jpath(where, "content"))
    if content.get("content_type") not in TEXT_CONTENT:
        skipped["non_text"] += 1
        return None
    parts = f.items(content.get("parts", []), jpath(jpath(where, "content"), "parts"))
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("content_type") == "audio_transcription" \
                and isinstance(part.get("text"), str):
            texts.append(part["text"])  # voice mode: the words said are the message
        else:  # image and audio asset pointers: the text parts around them stay
            skipped["non_text"] += 1
    return "\n\n".join(t for t in texts if t)
