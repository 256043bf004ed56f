"""Small helpers every importer shares: decoding, JSON paths, typed field access, times.

Importers report a bad input as ``CorpusFormatError(path, where, problem)``;
``where`` is a JSON path such as ``$[3].mapping["abc"].message.author.role``
built with :func:`jpath`, or ``line 12`` for line-based formats.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timezone
from typing import Any, Iterator, Literal, NamedTuple, overload

from lyra_lab.corpus._model import CorpusFormatError

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_CUT_TOKEN = re.compile(r'[A-Za-z0-9.+\\-]*\Z|"[^"]*\Z')
_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true/false",
               list: "a list", dict: "an object", type(None): "null"}


class TurnKey(NamedTuple):
    """The ids of a turn being read: its own, its conversation's and its session's."""

    id: str
    conversation_id: str
    session_id: str


class Slot(NamedTuple):
    """Where the turns being read go: their conversation and session, and the time of the first."""

    conversation_id: str
    session_id: str
    start: datetime


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of ``data``: the corpus fingerprint recorded as ``Corpus.sha256``."""
    return hashlib.sha256(data).hexdigest()


def decode_utf8(path: str, data: bytes) -> str:
    """Decode UTF-8 (a leading BOM is dropped); bad bytes raise CorpusFormatError naming the line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        if exc.reason == "unexpected end of data":  # the last character was cut in half
            raise CorpusFormatError(path, f"line {line}", "truncated file (it ends inside a UTF-8 character)") from None
        raise CorpusFormatError(
            path, f"line {line}", f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None


def parse_json(path: str, text: str) -> Any:
    """Parse a whole JSON document; errors name the line and column."""
    if not text.strip():
        raise CorpusFormatError(path, "", "empty file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorpusFormatError(path, f"line {exc.lineno} column {exc.colno}", json_problem(exc, text)) from None


def json_problem(exc: json.JSONDecodeError, text: str) -> str:
    """Describe a parse error, saying ``truncated`` when the text looks cut off."""
    if is_truncated(exc, text):
        return f"truncated JSON ({exc.msg})"
    return f"not valid JSON ({exc.msg})"


def is_truncated(exc: json.JSONDecodeError, text: str) -> bool:
    r"""Whether ``text`` failed to parse because it ends early (a cut-off download or copy).

    The parser stops either at the very end, or at the start of the one token the
    cut went through: a string with no closing quote, or a literal or number cut
    short (``tru``, ``1.``, ``"\u00``).
    """
    if exc.msg == "Extra data":  # a whole value and then more: not a cut
        return False
    if exc.msg.startswith("Unterminated string"):  # a raw newline would be "Invalid control character"
        return True
    rest = text[exc.pos:].rstrip()
    return not rest or (len(rest) <= 12 and _CUT_TOKEN.match(rest) is not None)


def jpath(where: str, key: str | int) -> str:
    """Extend a JSON path: ``jpath("$[0]", "mapping")`` → ``$[0].mapping``; odd keys are quoted."""
    if isinstance(key, int):
        return f"{where}[{key}]"
    if _IDENT.match(key):
        return f"{where}.{key}"
    return f"{where}[{json.dumps(key, ensure_ascii=False)}]"


def type_name(value: object) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


class Fields:
    """Typed access to JSON objects that turns every schema slip into a CorpusFormatError.

    Args:
        path: the file (or archive member) named in error messages.
    """

    def __init__(self, path: str):
        self.path = path

    def error(self, where: str, problem: str) -> CorpusFormatError:
        return CorpusFormatError(self.path, where, problem)

    def json_line(self, raw: str, where: str) -> dict[str, Any]:
        """One JSON Lines record, which must be an object."""
        try:
            rec = json.loads(raw)
        except json.JSONDecodeError as exc:
            cut = "truncated, " if is_truncated(exc, raw) else ""
            raise self.error(where, f"not valid JSON ({cut}{exc.msg} at column {exc.colno})") from None
        if not isinstance(rec, dict):
            raise self.error(where, f"expected a JSON object, got {type_name(rec)}")
        return rec

    def obj(self, value: object, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(where, f"expected an object, got {type_name(value)}")
        return value

    def items(self, value: object, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.error(where, f"expected a list, got {type_name(value)}")
        return value

    def places(self, doc: object, what: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """The objects of a document that is one object (``$``) or a list of them (``$[i]``), with places.

        An empty list is an error ("no ``what``") at once, a non-object item when reached.
        """
        if isinstance(doc, dict):
            raw = [("$", doc)]
        else:
            raw = [(f"$[{i}]", value) for i, value in enumerate(self.items(doc, "$"))]
        if not raw:
            raise self.error("$", f"no {what}")
        return ((where, self.obj(value, where)) for where, value in raw)

    def first_at(self, seen: dict[str, str], value: str, where: str, key: str, what: str) -> None:
        """Record that id ``value`` (field ``key`` of the object at ``where``) is first seen there.

        An id seen before is an error naming both places.
        """
        if value in seen:
            raise self.error(jpath(where, key), f"{what} {value!r} repeats {seen[value]}")
        seen[value] = where

    def get(self, obj: dict[str, Any], key: str, where: str, types: type | tuple[type, ...],
            *, required: bool = True) -> Any:
        """``obj[key]`` checked against ``types``; a missing or null optional field gives None."""
        value = obj.get(key)
        if value is None:
            if required:
                raise self.error(jpath(where, key), "missing required field" if key not in obj else "must not be null")
            return None
        wanted = types if isinstance(types, tuple) else (types,)
        # bool is an int subclass in Python; JSON true is never a valid count or epoch
        if not isinstance(value, wanted) or (isinstance(value, bool) and bool not in wanted):
            names = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in wanted)
            raise self.error(jpath(where, key), f"expected {names}, got {type_name(value)} {_short(value)}")
        return value

    @overload
    def text(self, obj: dict[str, Any], key: str, where: str, *, required: Literal[True] = ...) -> str: ...
    @overload
    def text(self, obj: dict[str, Any], key: str, where: str, *, required: bool) -> str | None: ...

    def text(self, obj: dict[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
        return self.get(obj, key, where, str, required=required)

    @overload
    def answer(self, obj: dict[str, Any], key: str, where: str, *, required: Literal[True] = ...) -> str: ...
    @overload
    def answer(self, obj: dict[str, Any], key: str, where: str, *, required: bool) -> str | None: ...

    def answer(self, obj: dict[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
        """A gold answer: benchmarks store some as numbers (``2022``); kept as their text."""
        value = self.get(obj, key, where, (str, int, float), required=required)
        return None if value is None else str(value)

    def time(self, value: object, where: str) -> datetime | None:
        """An ISO 8601 string or a Unix epoch (seconds) as an aware UTC datetime; None stays None."""
        if value is None:
            return None
        try:
            return parse_time(value)
        except (TypeError, ValueError, OverflowError, OSError) as exc:
            raise self.error(where, str(exc)) from None


def parse_time(value: object) -> datetime:
    """Parse an ISO 8601 string (``Z`` allowed; no offset means UTC) or epoch seconds to UTC."""
    if isinstance(value, bool):
        raise TypeError(f"expected a timestamp, got {type_name(value)}")
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, tz=timezone.utc)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"not an ISO 8601 timestamp: {_short(value)}") from None
        if parsed.tzinfo is None:
            return parsed.replace(tzinfo=timezone.utc)
        return parsed.astimezone(timezone.utc)
    raise TypeError(f"expected an ISO 8601 string or epoch seconds, got {type_name(value)}")


def _short(value: object, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"
