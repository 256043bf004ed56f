r"""ChatGPT data export (``conversations.json``, alone or inside the export ``.zip``).

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

Kept, marked in ``Turn.meta["part"] = "canvas"``: canvas documents (the
``canmore.create_textdoc`` / ``canmore.update_textdoc`` calls, whose content is
JSON ``{"name", "type", "content"}`` or ``{"updates": [...]}``), as assistant
turns ``"[canvas: <name>]\n<document>"``; ``include_attachments=False`` skips
them (counted as ``canvas``).  Citation and widget markup is made plain text
(:mod:`lyra_lab.corpus._markup`: citations dropped, entity names kept).

One Conversation per export (id = file stem or the ``name`` given; chats left
with no turns are counted in its ``meta["empty_chats"]``), one Session per
ChatGPT conversation (id = its ``conversation_id``/``id``, title kept),
sessions ordered by ``create_time`` (the export lists newest first).  Turn ids
are the mapping's node ids; ``create_time`` epochs become UTC datetimes.  Any
parent cycle in a mapping, on the visible thread or not, is an error.  A single
conversation object saved on its own (not in a list) is a one-chat export.

"Branch in new chat" copies the thread so far, node ids included, into a new
conversation.  A node shared this way becomes one turn, in the conversation
created first; the other's ``Session.meta["branched_from"]`` holds
``{"conversation_id", "node_id", "shared_nodes_skipped"}`` (the conversation
from ``branching_from_conversation_id`` when the export gives it, and the
last shared node).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from lyra_lab.corpus._json_util import Fields, TurnKey, jpath
from lyra_lab.corpus._chatgpt_canvas import CANVAS_PREFIX, canvas_turn_text, name_canvas_updates
from lyra_lab.corpus._markup import plain_text
from lyra_lab.corpus._model import Conversation, Probe, Role, Session, Turn

KEPT_ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant"}
SKIPPED_ROLES = {"system": "system", "tool": "tool"}
TEXT_CONTENT = ("text", "multimodal_text")


def looks_like(doc: object) -> bool:
    if isinstance(doc, dict):  # one conversation saved on its own
        return "mapping" in doc and "current_node" in doc
    return isinstance(doc, list) and bool(doc) and isinstance(doc[0], dict) and "mapping" in doc[0]


def parse(path: str, doc: object, name: str, *, include_attachments: bool = True
          ) -> tuple[tuple[Conversation, ...], tuple[Probe, ...]]:
    """Parse a ChatGPT export document (or one conversation object) into one Conversation named ``name``."""
    f = Fields(path)
    drafts: list[_Draft] = []
    seen_sessions: dict[str, str] = {}
    for where, obj in f.places(doc, "conversations in the export"):
        draft = _session(f, obj, where, name, include_attachments)
        f.first_at(seen_sessions, draft.id, where, "id", "conversation id")
        drafts.append(draft)
    sessions = [s for s in _share_nodes(drafts, name) if s.turns]  # a chat with nothing visible has nothing to remember
    if not sessions:
        raise f.error("$", "no visible user or assistant messages in any conversation")
    sessions.sort(key=_start_key)
    meta = {"source_format": "chatgpt", "empty_chats": len(drafts) - len(sessions)}
    return (Conversation(id=name, sessions=tuple(sessions), meta=meta),), ()


@dataclass
class _Draft:
    """A conversation parsed but not yet a Session: branches still share node ids."""

    id: str
    turns: list[Turn]
    title: str | None
    started_at: datetime | None
    meta: dict[str, Any]
    branched_from: str | None  # the conversation it was branched from, as the export says


def _share_nodes(drafts: list[_Draft], name: str) -> list[Session]:
    """Give each node shared between conversations to the one that wrote it first.

    "Branch in new chat" copies the thread so far, node ids and all, into a new
    conversation.  Oldest conversation first (ties in file order), a node already
    imported is skipped; the later conversation records where it branched off.
    """
    owner: dict[str, str] = {}
    sessions: dict[int, Session] = {}
    for i in sorted(range(len(drafts)), key=lambda i: _start_key(drafts[i])):
        draft = drafts[i]
        shared = [t for t in draft.turns if t.id in owner]
        meta = dict(draft.meta)
        if shared:
            meta["branched_from"] = {"conversation_id": draft.branched_from or owner[shared[-1].id],
                                     "node_id": shared[-1].id, "shared_nodes_skipped": len(shared)}
        elif draft.branched_from:
            meta["branched_from"] = {"conversation_id": draft.branched_from, "node_id": None,
                                     "shared_nodes_skipped": 0}
        turns = tuple(t for t in draft.turns if t.id not in owner)
        owner.update((t.id, draft.id) for t in turns)
        sessions[i] = Session(id=draft.id, conversation_id=name, turns=turns, title=draft.title, started_at=draft.started_at, meta=meta)
    return [sessions[i] for i in range(len(drafts))]


def _start_key(session: Session | _Draft) -> tuple[bool, float]:
    start = session.started_at
    return (start is None, start.timestamp() if start else 0.0)


def _session(f: Fields, conv: dict[str, Any], where: str, name: str, include_attachments: bool) -> _Draft:
    sid = f.text(conv, "conversation_id", where, required=False) or f.text(conv, "id", where, required=False)
    if not sid:
        raise f.error(jpath(where, "conversation_id"), "missing required field (nor is there an 'id')")
    mapping = f.obj(conv.get("mapping"), jpath(where, "mapping"))
    _check_acyclic(f, mapping, where)
    chain = _visible_chain(f, mapping, f.text(conv, "current_node", where), where)
    skipped: Counter[str] = Counter()
    turns = []
    for node_id in chain:
        turn = _turn(f, mapping[node_id], jpath(jpath(where, "mapping"), node_id), TurnKey(node_id, name, sid),
                     _Keep(include_attachments, skipped))
        if turn is not None:
            turns.append(turn)
    turns = name_canvas_updates(turns)
    started = f.time(f.get(conv, "create_time", where, (int, float, str), required=False),
                     jpath(where, "create_time"))
    meta = {"pruned_nodes": len(mapping) - len(chain), "skipped": {k: n for k, n in sorted(skipped.items()) if n}}
    title = f.text(conv, "title", where, required=False)
    return _Draft(sid, turns, title, started, meta, _branch_origin(conv, mapping, chain))


def _branch_origin(conv: dict[str, Any], mapping: dict[str, Any], chain: list[str]) -> str | None:
    """``branching_from_conversation_id`` from the conversation, its metadata or its messages' metadata."""
    candidates = [conv, conv.get("metadata")]
    candidates += [((mapping[n] or {}).get("message") or {}).get("metadata") for n in chain
                   if isinstance(mapping[n], dict) and isinstance(mapping[n].get("message"), dict)]
    for holder in candidates:
        if isinstance(holder, dict) and isinstance(holder.get("branching_from_conversation_id"), str):
            return holder["branching_from_conversation_id"]
    return None


def _check_acyclic(f: Fields, mapping: dict[str, Any], where: str) -> None:
    """Any parent cycle, on the visible thread or an abandoned branch, means a corrupt file."""
    acyclic: set[str] = set()
    for start in mapping:
        path: list[str] = []
        node: object = start
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


class _Keep(NamedTuple):
    """What reading a session keeps: attachments (canvas documents) or not; a count of what it skipped."""

    attachments: bool
    skipped: Counter[str]


def _turn(f: Fields, node: dict[str, Any], where: str, key: TurnKey, keep: _Keep) -> Turn | None:
    node_id, conv_id, session_id = key
    include_attachments, skipped = keep
    message = node.get("message")
    if message is None:  # the synthetic root node carries no message
        return None
    mwhere = jpath(where, "message")
    message = f.obj(message, mwhere)
    author = f.obj(message.get("author"), jpath(mwhere, "author"))
    role = f.text(author, "role", jpath(mwhere, "author"))
    if role not in KEPT_ROLES and role not in SKIPPED_ROLES:
        raise f.error(jpath(jpath(mwhere, "author"), "role"),
                      f"unknown author role {role!r} (expected user, assistant, system or tool)")
    stamp = f.time(f.get(message, "create_time", mwhere, (int, float, str), required=False),
                   jpath(mwhere, "create_time"))
    recipient = message.get("recipient")
    canvas_tool = author.get("name") if role == "tool" else recipient if role == "assistant" else None
    if isinstance(canvas_tool, str) and canvas_tool.startswith(CANVAS_PREFIX):
        canvas = canvas_turn_text(message, canvas_tool)
        if canvas is not None:
            if not include_attachments:
                skipped["canvas"] += 1
                return None
            text, meta = canvas
            return Turn(id=node_id, conversation_id=conv_id, session_id=session_id, role="assistant",
                        text=text, timestamp=stamp, meta=meta)
    if role in SKIPPED_ROLES:
        skipped[SKIPPED_ROLES[role]] += 1
        return None
    metadata = message.get("metadata") or {}
    if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
        skipped["hidden"] += 1
        return None
    if recipient not in (None, "all"):
        skipped["tool"] += 1
        return None
    raw_text = _text(f, message, mwhere, skipped)
    if raw_text is None:  # already counted as non_text
        return None
    text = plain_text(raw_text)
    if not text.strip():
        skipped["empty"] += 1
        return None
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
