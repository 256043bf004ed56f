"""``jsonl_bytes``: records as JSONL, encoded by orjson, reading back exactly as ``json`` would have written them.

A run writes its rows by the hundred thousand (210,442 for all of LoCoMo): ``json``
encodes them one at a time in 1.3 CPU s, orjson a cell's whole list at once, cut
into lines, in 0.5 s.  Each line is what
``json.dumps(record, ensure_ascii=False, sort_keys=True, default=str)`` writes, but
for spacing (none after ``,`` and ``:``) and the spelling of some floats (``0.00001``
for ``1e-05``, ``1.5e-7`` for ``1.5e-07``): it reads back (``json.loads``, pyarrow's JSON reader) to the same
values.  Where orjson would write something else, ``json`` writes after all:

* NaN and ±Infinity, which orjson writes as ``null`` (``json`` writes ``NaN``, read
  back as NaN): the line of a record holding one is ``json``'s line;
* what orjson writes differently from ``json`` with ``default=str``, or cannot write:
  subclasses of ``str``/``int``/``float``/``dict``/``list`` (numpy scalars, a
  ``Mapping`` that is not a dict), dataclasses, dates, integers beyond 64 bits,
  keys that are not strings, lone surrogates: the whole list is ``json``'s.

One difference stays: a plain ``enum.Enum`` member (no ``str``/``int`` mixin) is
written as its value, where ``json`` writes ``str(member)``.  Rows hold plain values
(``strategy_spec`` turns enums into their values), never one.

``json_line`` does the same for one record with a ``default`` of the caller's (the run
log's): orjson hands it what ``json`` would hand it (dates, sets, numpy integers,
dataclasses), and a line orjson would write otherwise is ``json``'s, keys in the order
given (here too a plain ``enum.Enum`` member would be written as its value; lyra-lab's
enums are ``StrEnum``s, which both write as their value).  The run log's 12,210 events of all of LoCoMo (30 MB) took 0.56 CPU s through
``json``.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Mapping

import orjson

from lyra_lab._records import jsonl_text

_JSON_OPTIONS: dict[str, Any] = {"ensure_ascii": False, "sort_keys": True, "default": str}
_ORJSON_OPTIONS = (orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS
                   | orjson.OPT_PASSTHROUGH_DATETIME)


_LINE_OPTIONS = (orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
                 | orjson.OPT_APPEND_NEWLINE)
_NATIVE = (str, int, float, dict, list, tuple)


def _refuse(value: object) -> object:
    raise TypeError(f"{type(value).__name__}: left to json")


def jsonl_bytes(records: Iterable[Mapping[str, Any]]) -> bytes:
    """``records`` as UTF-8 JSONL with sorted keys, one line each (see the module docstring)."""
    rows = list(records)
    if not rows:
        return b""
    try:
        data = _orjson_lines(rows)
    except orjson.JSONEncodeError:
        return jsonl_text(rows, **_JSON_OPTIONS).encode("utf-8")
    if b"null" not in data:
        return data
    # null is None, or orjson's spelling of NaN and ±Infinity: the lines of rows holding those are json's.
    lines = data.split(b"\n")  # orjson writes a newline in a string as \n: these are the lines, and b""
    encode = json.JSONEncoder(**_JSON_OPTIONS).encode
    for i, row in enumerate(rows):
        if b"null" in lines[i] and _nonfinite(row):
            lines[i] = encode(row).encode("utf-8")
    return b"\n".join(lines)


def json_line(record: Mapping[str, Any], encode: Callable[[Any], str], default: Callable[[Any], Any]) -> bytes:
    """``record``'s line (UTF-8, newline-terminated), reading back as ``encode(record)`` does.

    Args:
        record: a dict (keys kept in their order).
        encode: the ``json`` encoder whose lines these are (``JSONEncoder(default=default, ...).encode``).
        default: that encoder's ``default``, given what orjson cannot write.
    """
    try:
        line = orjson.dumps(record, default=_only_not_native(default), option=_LINE_OPTIONS)
    except orjson.JSONEncodeError:
        return (encode(record) + "\n").encode("utf-8")
    if b"null" in line and _nonfinite(record):  # orjson's spelling of NaN and ±Infinity
        return (encode(record) + "\n").encode("utf-8")
    return line


def _only_not_native(default: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``default`` for what ``json`` also hands to it.

    A subclass of a type ``json`` writes itself is refused (the line is then ``json``'s).
    """
    def convert(value: object) -> object:
        if isinstance(value, _NATIVE):
            raise TypeError(f"{type(value).__name__}: left to json")
        out = default(value)
        if _nonfinite(out):  # e.g. a numpy float32 NaN made a float: orjson would write null
            raise TypeError("a NaN or an infinity: left to json")
        return out

    return convert


def _orjson_lines(rows: list[Any]) -> bytes:
    """Orjson's JSONL of ``rows``: one call for the list, cut into lines (NaN and ±Infinity written as null)."""
    whole = orjson.dumps(rows, default=_refuse, option=_ORJSON_OPTIONS)
    # "[{...},{...}]": when every row is a dict and "},{" occurs only between rows (no value holds it),
    # the lines are the list's items, cut there.
    if whole.count(b"},{") == len(rows) - 1 and set(map(type, rows)) == {dict}:
        cut = whole.replace(b"},{", b"}\n{")
        return b"".join((memoryview(cut)[1:-1], b"\n"))  # two copies of the rows' text, not three
    option = _ORJSON_OPTIONS | orjson.OPT_APPEND_NEWLINE
    return b"".join([orjson.dumps(r, default=_refuse, option=option) for r in rows])


def _nonfinite(value: object) -> bool:
    """Whether ``value`` holds a NaN or an infinity at any depth (orjson refused subclasses: types are exact).

    A loop over a stack, not a call per value: a probe's log record holds ~60 values, and its ``null``
    (no answer) sends every such record here.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is float:
            if item - item != 0.0:  # inf - inf and nan - nan are nan; a finite value gives 0.0
                return True
        elif type(item) is dict:
            stack.extend(item.values())
        elif type(item) is list or type(item) is tuple:
            stack.extend(item)
    return False
