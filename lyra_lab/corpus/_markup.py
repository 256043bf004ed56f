r"""ChatGPT's rich markup in message text, turned into plain text.

ChatGPT wraps citations and rich widgets in private-use characters:
``U+E200`` opens, ``U+E202`` separates fields, ``U+E201`` closes, the first
field naming the kind (``cite``, ``filecite``, ``image_group``, ``entity``,
``navlist``, ...).  Older answers cite as ``【12†source】`` or
``【4:0†file.pdf】``.  None of it is words the user read, so:

* citations (``cite``, ``filecite``, ``【…†…】``) are dropped, not kept as
  ``[n]``: the numbers point at search results the export does not hold;
* ``entity`` keeps its display name (the payload is a JSON list like
  ``["people", "Ada Lovelace", "English mathematician"]``);
* every other kind (``image_group``, ``navlist``, unknown ones) is dropped, and
  so is any stray character of ``U+E200`` to ``U+E2FF``.

A space left in front of punctuation by a dropped citation goes too.

>>> plain_text("Rome was founded in 753 BC \ue200cite\ue202turn0search1\ue202turn0news3\ue201.")
'Rome was founded in 753 BC.'
>>> plain_text('Ask \ue200entity\ue202["people","Ada Lovelace",{"x":1}]\ue201 about it')
'Ask Ada Lovelace about it'
>>> plain_text("See the guide【4:0†guide.pdf】 and this【12†source】.")
'See the guide and this.'
>>> plain_text("\ue200image_group\ue202{\"query\":[\"trams\"]}\ue201Trams!")
'Trams!'
>>> plain_text("no markup")
'no markup'
"""

from __future__ import annotations

import json
import re

_OPEN, _CLOSE, _SEP = "\ue200", "\ue201", "\ue202"
# a whole markup span: open, kind, optional fields, close (no nesting in the wild)
_SPAN = re.compile(r"([ \t]*)\ue200([^\ue200\ue201\ue202]*)((?:\ue202[^\ue200\ue201]*)?)\ue201")
_OLD_CITE = re.compile(r"([ \t]*)【[^】\n]{0,200}†[^】\n]{0,200}】")
_STRAY = re.compile(r"[\ue200-\ue2ff]")
_PUNCT_OR_END = re.compile(r"[.,;:!?)\]]|\s|\Z")


def plain_text(text: str) -> str:
    """``text`` with ChatGPT's citation and widget markup replaced by plain words (see the module doc)."""
    if "【" not in text and not _STRAY.search(text):
        return text
    text = _SPAN.sub(_replace_span, text)
    text = _OLD_CITE.sub(_replace_dropped, text)
    return _STRAY.sub("", text)


def _keep_space(match: re.Match[str]) -> str:
    """The whitespace before a dropped span, unless punctuation or a break follows it."""
    return "" if _PUNCT_OR_END.match(match.string, match.end()) else match.group(1)


def _replace_dropped(match: re.Match[str]) -> str:
    return _keep_space(match)


def _replace_span(match: re.Match[str]) -> str:
    kind = match.group(2).strip()
    if kind == "entity":
        name = _entity_name(match.group(3)[1:])
        if name:
            return match.group(1) + name
    return _keep_space(match)


def _entity_name(payload: str) -> str | None:
    """The display name of an entity payload: the second item of its JSON list (or the raw text)."""
    try:
        value = json.loads(payload)
    except ValueError:
        return payload.split(_SEP)[0].strip() or None
    if isinstance(value, list) and len(value) > 1 and isinstance(value[1], str):
        return value[1]
    if isinstance(value, str):
        return value
    return None
