"""``jsonl_bytes``: records as JSONL, encoded by orjson, reading back exactly as ``json`` would have written them.

A run writes its rows by the hundred thousand (210,442 for all of LoCoMo): ``json``
encodes them one at a time at about 7 µs a row, orjson encodes a cell's whole list
at once at under 1 µs a row.  Each line is what
``json.dumps(record, ensure_ascii=False, sort_keys=True, default=str)`` writes, but
for spacing (none after ``,`` and ``:``) and the spelling of some floats (``1e-5``
for ``1e-05``): it reads back (``json.loads``, pyarrow's JSON reader) to the same
values.  Where orjson would write something else, ``json`` writes after all:

* NaN and ±Infinity, which orjson writes as ``null`` (``json`` writes ``NaN``, read
  back as NaN): a line holding ``null`` is ``json``'s line;
* what orjson writes differently from ``json`` with ``default=str``, or cannot write:
  subclasses of ``str``/``int``/``float``/``dict``/``list`` (numpy scalars, a
  ``Mapping`` that is not a dict), dataclasses, dates, integers beyond 64 bits,
  keys that are not strings, lone surrogates: the whole list is ``json``'s.

One difference stays: a plain ``enum.Enum`` member (no ``str``/``int`` mixin) is
written as its value, where ``json`` writes ``str(member)``.  Rows hold plain values
(``strategy_spec`` turns enums into their values), never one.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

import orjson

from lyra_lab._records import jsonl_text

_JSON_OPTIONS: dict[str, Any] = {"ensure_ascii": False, "sort_keys": True, "default": str}
_ORJSON_OPTIONS = (orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS
                   | orjson.OPT_PASSTHROUGH_DATETIME)


def _refuse(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__}: left to json")


def jsonl_bytes(records: Iterable[Mapping[str, Any]]) -> bytes:
    """``records`` as UTF-8 JSONL with sorted keys, one line each (see the module docstring)."""
    rows = list(records)
    if not rows:
        return b""
    try:
        whole = orjson.dumps(rows, default=_refuse, option=_ORJSON_OPTIONS)
    except orjson.JSONEncodeError:
        return jsonl_text(rows, **_JSON_OPTIONS).encode("utf-8")
    # "[{...},{...}]": when every record is a dict, "},{" occurs only between records (no value
    # holds it) and no value is null (nor NaN), the lines are the list's items, cut there.
    if b"null" not in whole and whole.count(b"},{") == len(rows) - 1 and set(map(type, rows)) == {dict}:
        cut = whole.replace(b"},{", b"}\n{")
        return b"".join((memoryview(cut)[1:-1], b"\n"))  # two copies of a cell's rows, not three
    encode = json.JSONEncoder(**_JSON_OPTIONS).encode
    lines = [orjson.dumps(r, default=_refuse, option=_ORJSON_OPTIONS) for r in rows]
    return b"".join((encode(r).encode("utf-8") if b"null" in line else line) + b"\n" for r, line in zip(rows, lines))
