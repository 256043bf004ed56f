"""Field-by-field check of a native corpus file before it is parsed.

The native reader trusts what ``Corpus.save`` wrote; a file edited by hand or
damaged on the way could otherwise put a list where a text belongs and come
back as a Corpus that breaks later stages.  Every record's fields are checked
for type, and ids must not repeat (conversations; sessions and turns within a
conversation), so a bad file is a CorpusFormatError naming the line.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lyra_lab.corpus._json_util import Fields, type_name

_OPT_STR = (str, type(None))
_SCHEMA: dict[str, dict[str, tuple[type, ...]]] = {
    "header": {"name": _OPT_STR, "source": _OPT_STR, "sha256": _OPT_STR, "format": _OPT_STR},
    "conversation": {"id": (str,), "title": _OPT_STR, "meta": (dict, type(None))},
    "session": {"id": (str,), "conversation_id": (str,), "title": _OPT_STR, "started_at": _OPT_STR,
                "gist": _OPT_STR, "meta": (dict, type(None))},
    "turn": {"id": (str,), "conversation_id": (str,), "session_id": (str,), "role": (str,), "text": (str,),
             "speaker": _OPT_STR, "timestamp": _OPT_STR, "meta": (dict, type(None))},
    "probe": {"id": (str,), "conversation_id": (str,), "question": (str,), "answer": (str,),
              "evidence": (list, type(None)), "category": (int, str, type(None)), "asked_at": _OPT_STR,
              "adversarial": (bool, type(None)), "abstention": (bool, type(None)), "meta": (dict, type(None))},
}
_REQUIRED = {"id", "conversation_id", "session_id", "role", "text", "question", "answer"}


def check_lines(path: str, lines: Iterable[str]) -> None:
    """Raise CorpusFormatError at the first record with a field of the wrong type or a repeated id."""
    f = Fields(path)
    seen: dict[tuple[str, ...], int] = {}
    header_done = False
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        where = f"line {n}"
        rec = f.json_line(raw, where)
        kind = "header" if not header_done else rec.get("type")
        header_done = True
        if not isinstance(kind, str):
            continue  # the reader names unknown record types and a missing header itself
        schema = _SCHEMA.get(kind)
        if schema is None:
            continue  # the reader names unknown record types and a missing header itself
        for key, types in schema.items():
            value = rec.get(key)
            if value is None and key in _REQUIRED and kind != "header":
                raise f.error(where, f"missing field {key!r}" if key not in rec else f"{key!r} must not be null")
            if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
                raise f.error(where, f"{key!r}: expected {' or '.join(_name(t) for t in types)}, "
                                     f"got {type_name(value)}")
        if kind == "probe" and any(not isinstance(e, str) for e in rec.get("evidence") or []):
            raise f.error(where, "'evidence' must list turn ids as strings")
        identity = _identity(kind, rec)
        if identity is not None:
            if identity in seen:
                raise f.error(where, f"{kind} id {rec['id']!r} repeats line {seen[identity]}")
            seen[identity] = n


def _identity(kind: str, rec: dict[str, Any]) -> tuple[str, ...] | None:
    if kind == "conversation":
        return ("conversation", rec["id"])
    if kind in ("session", "turn"):
        return (kind, rec["conversation_id"], rec["id"])
    return None


def _name(t: type) -> str:
    return "null" if t is type(None) else type_name(t())
