"""ChatGPT canvas documents ("canmore"): the text a user had the assistant write beside the chat.

The assistant writes a canvas by calling ``canmore.create_textdoc`` with JSON
``{"name", "type", "content"}`` and edits it with ``canmore.update_textdoc``
and ``{"updates": [{"pattern", "replacement"}]}``; the tool's reply only says
"Successfully created text document ...".
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from lyra_lab.corpus._model import Turn

CANVAS_PREFIX = "canmore."


def canvas_turn_text(message: dict[str, Any], tool: str) -> tuple[str, dict[str, Any]] | None:
    """A canvas document written or rewritten by the assistant, as turn text and meta; None if none.

    The call's content is JSON: ``{"name", "type", "content"}`` to create a
    document, ``{"updates": [{"pattern", "replacement"}]}`` to edit one.  Tool
    replies ("Successfully created text document ...") hold no document.
    """
    content = message.get("content")
    raw = None
    if isinstance(content, dict):
        raw = content.get("text")
        parts = content.get("parts")
        if not isinstance(raw, str) and isinstance(parts, list):
            raw = "".join(p for p in parts if isinstance(p, str))
    try:
        doc = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    body = doc.get("content")
    if not isinstance(body, str):
        updates = doc.get("updates")
        replaced = [u.get("replacement") for u in updates if isinstance(u, dict)] if isinstance(updates, list) else []
        body = "\n\n".join(r for r in replaced if isinstance(r, str))
    if not body.strip():
        return None
    meta: dict[str, Any] = {"part": "canvas", "canvas_tool": tool}
    for key in ("name", "type"):
        if isinstance(doc.get(key), str):
            meta[f"canvas_{key}"] = doc[key]
    label = f"[canvas: {meta['canvas_name']}]" if "canvas_name" in meta else "[canvas]"
    return f"{label}\n{body}", meta


def name_canvas_updates(turns: list[Turn]) -> list[Turn]:
    """An update names no document: it edits the one the thread last wrote, so it gets that name."""
    named: list[Turn] = []
    last: str | None = None
    for turn in turns:
        if turn.meta.get("part") == "canvas":
            if "canvas_name" in turn.meta:
                last = turn.meta["canvas_name"]
            elif last is not None:
                turn = replace(turn, text=f"[canvas: {last}]" + turn.text[len("[canvas]"):],
                               meta={**turn.meta, "canvas_name": last})
        named.append(turn)
    return named
