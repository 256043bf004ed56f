"""One convention for every record lyra-lab writes to disk: a kind, a schema version, plain JSON values.

A record type declares itself with :func:`record` (or a :class:`Schema` object for
records whose shape is written by hand, like a probes line or ``spec.json``).
Written records carry an envelope key, ``"schema": "<kind>/<version>"``, in front
of their fields; a record without it is the *old shape* (what lyra-lab wrote before
the envelope existed) and is read as the schema's ``legacy`` version.  Reading
checks the envelope, then the keys, and turns anything wrong into ONE
:class:`RecordError` line naming the file (or place), the kind and the problem.

>>> from dataclasses import dataclass
>>> @record(Schema("point", version=1, legacy=1))
... @dataclass(frozen=True)
... class Point:
...     x: int
...     tags: tuple[str, ...] = ()
>>> to_record(Point(1, ("a",)))
{'schema': 'point/1', 'x': 1, 'tags': ['a']}
>>> from_record(Point, {"x": 2, "tags": ["b"]})  # the old shape: no envelope
Point(x=2, tags=('b',))
>>> from_record(Point, {"schema": "point/7", "x": 2}, source="p.json")
Traceback (most recent call last):
  ...
lyra_lab._records.RecordError: p.json: point schema version 7 is newer than this lyra-lab; this lyra-lab \
supports version 1; upgrade lyra-lab to read it

Why no library: ``cattrs`` is not installed and its errors are exception groups that
would still need flattening into one line; pydantic (present only through
``openai``) coerces values in lax mode and would run beside the dataclasses'
own checks.  What the records need — nested dataclasses, tuples, enums,
``Mapping``, ``Optional``, datetimes and paths — is the hundred lines below.

This module is on the lowest floor: it imports nothing from lyra-lab's packages (only the
errors and the parameter declarations beside it).  ``build_fields`` is also how a
``Registry`` builds a strategy from its spec: one implementation of dict → object.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import types
import typing
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, TypeVar, Union

import orjson

from lyra_lab._errors import ConfigError
from lyra_lab._params import check_value, declared, from_spec

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

SCHEMA_KEY = "schema"
T = TypeVar("T")
# What ``plain`` returns and a JSON file holds.
JSONValue = Union[None, bool, int, float, str, list["JSONValue"], dict[str, "JSONValue"]]


class RecordError(ConfigError):
    """A record that cannot be read: unknown kind, unsupported version, a missing or unknown key, a bad value."""


@dataclass(frozen=True)
class Schema:
    """What a record type writes and what it reads.

    Attributes:
        kind: the record's name in its envelope (``"backend_config"``).
        version: the version written now.
        readable: older versions still read (the reader upgrades them).
        legacy: the version of a record written without an envelope (the old
            shape); None when the envelope is required.
        encode: applied to the plain fields before writing (mask secrets, leave out defaults, reshape).
        decode: applied to the fields read, before they are checked (the inverse of ``encode``'s reshaping).
        version_key: for a record whose version was always a bare field
            (``{"schema_version": 2}``): that field, read and written in place of
            the envelope so that older lyra-lab versions keep reading new files.
        older: what to do with a version too old to read.
        hint: appended to version errors (what else the user can do).
    """

    kind: str
    version: int = 1
    readable: tuple[int, ...] = ()
    legacy: int | None = None
    encode: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    decode: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    version_key: str | None = None
    older: str = "write it again with this lyra-lab"
    hint: str = ""

    @property
    def tag(self) -> str:
        return f"{self.kind}/{self.version}"

    @property
    def label(self) -> str:
        return self.kind.replace("_", " ")

    def wrap(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """``fields`` (encoded) behind the envelope: ``{"schema": "<kind>/<version>", **fields}``."""
        body = self.encode(dict(fields)) if self.encode else dict(fields)
        if self.version_key:
            return {self.version_key: self.version, **body}
        return {SCHEMA_KEY: self.tag, **body}

    def _mapping(self, data: object, source: str | os.PathLike[str] | None) -> Mapping[str, object]:
        """``data`` if it is a JSON object, else the :class:`RecordError` saying what it is."""
        if not isinstance(data, Mapping):
            raise RecordError(f"{_where(source, self.label)}: expected a JSON object ({self.label} record), "
                              f"got {type(data).__name__}")
        return data

    def version_of(self, data: object, source: str | os.PathLike[str] | None = None) -> int:
        """The version ``data`` was written in; a :class:`RecordError` unless this lyra-lab reads it."""
        where = _where(source, self.label)
        data = self._mapping(data, source)
        key = self.version_key or SCHEMA_KEY
        if key not in data:
            if self.legacy is None:
                raise RecordError(f"{where}: no {key!r} key; expected a {self.label} record ({self.tag})")
            return self.legacy
        version: object = data[key]
        if not self.version_key:
            kind, _, number = str(version).partition("/")
            if kind != self.kind:
                raise RecordError(f"{where}: a {kind or version!r} record, not a {self.label} record ({self.tag})")
            version = int(number) if number.isdigit() else number
        if isinstance(version, int) and not isinstance(version, bool) and version in (self.version, *self.readable):
            return version
        raise RecordError(f"{where}: {self._unsupported(version)}")

    def _unsupported(self, version: object) -> str:
        number = isinstance(version, int) and not isinstance(version, bool)
        if isinstance(version, int) and number and version > self.version:
            age, advice = "newer than this lyra-lab", "upgrade lyra-lab to read it"
        elif number:
            age, advice = "older than this lyra-lab reads", self.older
        else:
            age, advice = "not a version", "it was not written by lyra-lab"
        reads = f" (and reads {', '.join(map(str, self.readable))})" if self.readable else ""
        return (f"{self.label} schema version {version!r} is {age}; this lyra-lab supports version "
                f"{self.version}{reads}; {advice}{self.hint}")

    def unwrap(self, data: object, source: str | os.PathLike[str] | None = None) -> dict[str, Any]:
        """The fields of ``data`` (decoded) without its envelope, after checking kind and version."""
        self.version_of(data, source)
        data = self._mapping(data, source)
        body = {k: v for k, v in data.items() if k != (self.version_key or SCHEMA_KEY)}
        return self.decode(body) if self.decode else body


def record(schema: Schema) -> Callable[[type[T]], type[T]]:
    """Class decorator: declare a dataclass a record written and read as ``schema`` says."""

    def declare(cls: type[T]) -> type[T]:
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"record {schema.kind!r}: {cls.__name__} must be a dataclass")
        cls.__record_schema__ = schema  # type: ignore[attr-defined]
        return cls

    return declare


def schema_of(cls: type) -> Schema:
    try:
        return cls.__record_schema__  # type: ignore[attr-defined]
    except AttributeError:
        raise TypeError(f"{cls.__name__} is not a record type (declare it with @record)") from None


def plain(value: object) -> JSONValue:
    """``value`` as JSON values: dataclasses → dicts, tuples → lists, enums → their values, dates → ISO text.

    Anything else that JSON cannot hold becomes ``str(value)``.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return plain(value.value)
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return str(value)


def fields_of(obj: DataclassInstance | type[DataclassInstance]) -> dict[str, Any]:
    """The constructor fields of a dataclass instance as plain values (the body of its record).

    This is also the hook for strategy specs: ``{"name": registered_name, **fields_of(strategy)}``.
    """
    return {f.name: plain(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.init}


def to_record(obj: DataclassInstance, *, envelope: bool = True) -> dict[str, Any]:
    """The record of a ``@record`` dataclass: its envelope, then its fields (encoded) as plain values."""
    schema = schema_of(type(obj))
    body = fields_of(obj)
    return schema.wrap(body) if envelope else (schema.encode(body) if schema.encode else body)


def from_record(cls: type[T], data: object, source: str | os.PathLike[str] | None = None) -> T:
    """Build a ``@record`` dataclass from its record (with an envelope, or the old shape without one).

    Raises:
        RecordError: one line naming ``source`` (or the kind) and the problem.
    """
    schema = schema_of(cls)
    return build_fields(cls, schema.unwrap(data, source), _where(source, schema.label))


def build_fields(cls: type[T], body: Mapping[str, Any], where: str, *,
                 error: type[ConfigError] = RecordError) -> T:
    """``cls(**body)`` for a dataclass, with its keys checked and plain values turned into its field types.

    A declared strategy parameter (``lyra_lab._params.param``) is taken as its declaration says (a list
    for a tuple, ``convert`` applied) and checked, so a bad value is the one parameter message; other
    fields are structured by their annotations.  Every problem is one ``error`` line starting with
    ``where``: an unknown key (and the allowed ones), a missing key, a bad parameter value, or the
    class's own ``TypeError``/``ValueError``.  ``Registry.build`` passes ``error=ConfigError``.
    """
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    unknown = sorted(set(body) - set(fields))
    if unknown:
        raise error(f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(sorted(fields)) or 'none'}")
    missing = [name for name, f in fields.items() if name not in body and _required(f)]
    if missing:
        raise error(f"{where}: missing key {missing[0]!r}")
    params = declared(cls)
    try:
        hints = typing.get_type_hints(cls) if set(body) - set(params) else {}
    except Exception:  # an annotation naming what only a type checker imports: take values as they are
        hints = {}
    try:
        values = {k: (check_value(cls, k, from_spec(cls, k, v)) if k in params or k not in hints
                      else _structure(hints[k], v, f"{where}: {k}")) for k, v in body.items()}
        return cls(**values)
    except ConfigError as exc:  # a record's nested problem, or the one parameter message: already one line
        if isinstance(exc, error):
            raise
        raise error(str(exc)) from None
    except (TypeError, ValueError) as exc:
        raise error(f"{where}: {exc}") from None


def _required(f: dataclasses.Field) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def _structure(tp: object, value: object, where: str) -> object:
    """``value`` (plain JSON) as type ``tp``; values that do not fit pass through for the class's own checks."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        options = [a for a in args if a is not type(None)]
        return _structure(options[0], value, where) if len(options) == 1 else value
    if isinstance(value, list) and (origin is tuple or tp is tuple):
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_structure(args[0], v, where) for v in value)
        if args and len(args) == len(value):
            return tuple(_structure(a, v, where) for a, v in zip(args, value))
        return tuple(value)
    if isinstance(value, list) and origin is list and args:
        return [_structure(args[0], v, where) for v in value]
    if isinstance(tp, type) and value is not None:
        if dataclasses.is_dataclass(tp) and isinstance(value, Mapping):
            inner = getattr(tp, "__record_schema__", None)
            body = inner.unwrap(value, where) if inner else value
            return build_fields(tp, body, where)
        if issubclass(tp, enum.Enum) and not isinstance(value, tp):
            try:
                return tp(value)
            except ValueError:
                allowed = ", ".join(repr(m.value) for m in tp)
                raise RecordError(f"{where}: {value!r} is not one of {allowed}") from None
        if issubclass(tp, datetime) and isinstance(value, str):
            try:
                return datetime.fromisoformat(value)
            except ValueError:
                raise RecordError(f"{where}: {value!r} is not an ISO date-time") from None
        if issubclass(tp, PurePath) and isinstance(value, str):
            return Path(value)
    return value


def _where(source: str | os.PathLike[str] | None, label: str) -> str:
    return str(source) if source is not None else label


def read_jsonl(path: Path, error: type[Exception] = RecordError) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file, in order; a broken line is one ``error`` naming file and line."""
    return list(jsonl_objects(path, path.read_bytes().split(b"\n"), error))


def jsonl_objects(path: Path, lines: list[bytes], error: type[Exception] = RecordError) -> Iterator[dict[str, Any]]:
    """The JSON objects of ``lines`` (``path``'s, split at newlines), blank lines skipped.

    A broken line is one ``error`` naming file and line.  Parsed by orjson, and by ``json`` what orjson refuses and ``json``
    reads (``NaN``, ``Infinity``, integers past 64 bits).
    """
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            try:
                value = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                msg = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8"
                raise error(f"{path}: line {n}: not valid JSON ({msg})") from None
        if not isinstance(value, dict):
            raise error(f"{path}: line {n}: not a JSON object")
        yield value


def iter_jsonl(path: str | os.PathLike[str], keep: Callable[[bytes], bool] | None = None
               ) -> Iterator[dict[str, Any]]:
    """The JSON objects of an append-only JSONL file (a log), in order, as they are read.

    Unlike :func:`read_jsonl` it skips a line that does not parse: the last line of a file a
    killed process was appending to.  ``keep``, given a raw line, says whether to parse it at
    all (a cheap filter for large logs).
    """
    with open(path, "rb") as fh:
        for raw in fh:
            if keep is not None and not keep(raw):
                continue
            try:
                value = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            if isinstance(value, dict):
                yield value


def jsonl_text(records: Iterable[Mapping[str, Any]], **dumps: Any) -> str:
    """Records as JSONL text, one ``json.dumps(record, **dumps)`` line each.

    One encoder serves every record (``json.dumps`` with options builds one per
    call, a third of the time for rows of a few dozen keys).
    """
    cls = dumps.pop("cls", None) or json.JSONEncoder
    encode = cls(**dumps).encode
    return "".join(encode(r) + "\n" for r in records)
