"""Tool arguments from templates, and hits from a tool's JSON answer: the mapping of the ``mcp`` system.

A template is JSON (a table in TOML) whose strings may name fields in braces:
``{"entities": [{"name": "{turn_id}", "observations": ["{speaker}: {text}"]}]}``.
A string that is exactly one field (``"{k}"``) takes the field's value as it
is (a number stays a number); any other string is filled with ``str.format``
(literal braces are ``{{`` and ``}}``).

>>> fill({"n": "{k}", "q": "about {query}!"}, {"k": 5, "query": "dogs"})
{'n': 5, 'q': 'about dogs!'}
>>> sorted(fields_of_template({"a": ["{turn_id}", "x {text}"]}))
['text', 'turn_id']
>>> query_terms("What is my sister's job, and when did she start?")
['sister', 'job', 'start']
"""

from __future__ import annotations

import json
import re
import string
from datetime import datetime
from typing import Mapping

from lyra_lab.corpus import Turn

#: What a store template may name (one turn).
TURN_FIELDS = frozenset({"turn_id", "session_id", "conversation_id", "speaker", "role", "text", "timestamp", "date"})
#: What a search template may name (one query, or one of its terms).
QUERY_FIELDS = frozenset({"query", "k", "now"})
_WHOLE = re.compile(r"\{(\w+)\}")
_WORD = re.compile(r"\w+")


def canonical(value: object) -> str:
    """A template (a mapping, or its JSON text) as canonical JSON text."""
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, Mapping):
        raise ValueError(f"a template is a table of arguments, got {type(value).__name__}")
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def fields_of_template(template: object) -> set[str]:
    """The field names a template uses."""
    if isinstance(template, str):
        return {name for _, name, _, _ in string.Formatter().parse(template) if name}
    if isinstance(template, Mapping):
        return set().union(*(fields_of_template(v) for v in template.values())) if template else set()
    if isinstance(template, list):
        return set().union(*(fields_of_template(v) for v in template)) if template else set()
    return set()


def fill(template: object, fields: Mapping[str, object]) -> object:
    """The template (any JSON value) with its fields filled in (see the module docstring)."""
    if isinstance(template, str):
        whole = _WHOLE.fullmatch(template)
        if whole and whole.group(1) in fields:
            return fields[whole.group(1)]
        return template.format_map(fields)
    if isinstance(template, Mapping):
        return {key: fill(value, fields) for key, value in template.items()}
    if isinstance(template, list):
        return [fill(value, fields) for value in template]
    return template


def fill_arguments(template: Mapping[str, object], fields: Mapping[str, object]) -> dict[str, object]:
    """A tool's arguments: a template table with its fields filled in.

    >>> fill_arguments({"query": "{query}", "limit": "{k}"}, query_fields("dogs", 3, None))
    {'query': 'dogs', 'limit': 3}
    """
    return {key: fill(value, fields) for key, value in template.items()}


def turn_fields(turn: Turn) -> dict[str, str]:
    """A turn's template fields."""
    stamp = turn.timestamp
    return {"turn_id": turn.id, "session_id": turn.session_id, "conversation_id": turn.conversation_id,
            "speaker": turn.speaker or str(turn.role), "role": str(turn.role), "text": turn.text,
            "timestamp": stamp.isoformat() if stamp else "", "date": stamp.date().isoformat() if stamp else ""}


def query_fields(query: str, k: int, now: datetime | None) -> dict[str, str | int]:
    """A query's template fields (``now``: ISO 8601, ``""`` when there is no time)."""
    return {"query": query, "k": k, "now": now.isoformat() if now else ""}


def query_terms(question: str) -> list[str]:
    """The content words of a question, in order, once each (English stopwords and 1-letter words out)."""
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    stop = set(STOPWORDS_EN_PLUS)
    words = [w for w in _WORD.findall(question.lower()) if len(w) > 1 and w not in stop]
    # "sister's" splits into "sister" and "s": the possessive is gone with the 1-letter words
    return list(dict.fromkeys(words))


def at_path(value: object, path: str) -> object:
    """``value["a"]["b"]`` for path ``a.b`` (``""``: the value itself; a number indexes a list).

    Raises:
        KeyError, IndexError, ValueError: the path is not there.
        TypeError: the path goes through something that is neither a list nor an object.
    """
    for key in filter(None, path.split(".")):
        if isinstance(value, list):
            value = value[int(key)]
        elif isinstance(value, Mapping):
            value = value[key]
        else:
            raise TypeError(f"{type(value).__name__} at {key!r} is neither a list nor an object")
    return value
