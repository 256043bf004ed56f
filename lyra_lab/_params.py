"""Strategy parameters declared once: type, bounds, choices and doc, checked by one function.

A strategy's parameter is a dataclass field whose default comes from ``param``::

    @dataclass(frozen=True)
    class Window(Strategy):
        size: int = param(8, ge=1, doc="the most turns in a window")
        mode: str = param("turns", choices=("turns", "lines"))

The field's annotation gives the type (``bool``, ``int``, ``float``, ``str``,
``tuple[str, ...]``, a class, or any of them ``| None``); ``param`` adds what is
allowed.  ``check_params`` (the ``__post_init__`` of the ``Strategy`` base, so
direct construction is checked) and ``Registry.build`` (for specs from TOML
and JSON) turn a bad value into a ``ConfigError`` of one format::

    chunker 'turn_window': parameter 'max_turns' = 0; allowed: an integer >= 1

The same declaration gives the parameter table of ``docs/experiment-file.md``.
A check that relates two parameters stays code in ``__post_init__`` (after
``super().__post_init__()``) and raises ``param_error``, so its message has
the same format.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Window(Strategy):
...     size: int = param(8, ge=1)
>>> Window(size=True)
Traceback (most recent call last):
...
lyra_lab._errors.ConfigError: strategy 'Window': parameter 'size' = True; allowed: an integer >= 1
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
import weakref
from typing import TYPE_CHECKING, Any, Callable, TypedDict, TypeVar, Unpack

from lyra_lab._errors import ConfigError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T")

_KEY = "lyra_lab.param"
_NOUNS = {bool: ("true or false", "booleans"), int: ("an integer", "integers"), float: ("a number", "numbers"),
          str: ("a string", "strings")}


@dataclasses.dataclass(frozen=True)
class Param:
    """What a parameter allows, beyond its type.

    Bounds are inclusive (``ge``, ``le``) or strict (``gt``, ``lt``); ``check`` is a predicate for what
    bounds and choices cannot say, described by ``allowed`` (which then replaces the generated
    description); ``convert`` turns what a spec file gives (a dict) into the field's type before the
    checks.
    """

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    choices: tuple[Any, ...] | None = None
    check: Callable[[Any], bool] | None = None
    convert: Callable[[Any], Any] | None = None
    allowed: str = ""
    doc: str = ""


class ParamOptions(TypedDict, total=False):
    """The keywords of ``param``: the fields of ``Param``, each optional."""

    ge: float | None
    gt: float | None
    le: float | None
    lt: float | None
    choices: tuple[Any, ...] | None
    check: Callable[[Any], bool] | None
    convert: Callable[[Any], Any] | None
    allowed: str
    doc: str


def param(default: T, **options: Unpack[ParamOptions]) -> T:
    """A dataclass field with ``default`` that declares what values the parameter allows.

    Args:
        default: the field's default value.
        **options: the ``Param`` fields (bounds, choices, check with its ``allowed`` words, convert, doc).
    """
    if options.get("check") is not None and not options.get("allowed"):
        raise TypeError("param(check=...) needs allowed=: the words for what the check accepts")
    choices = options.get("choices")
    if choices is not None:
        options["choices"] = tuple(choices)  # a list would make the declaration unhashable
    declaration = Param(**options)
    return dataclasses.field(default=default, metadata={_KEY: declaration})


@dataclasses.dataclass(frozen=True)
class Declared:
    """One declared parameter of a class: its name, resolved type and declaration."""

    name: str
    base: type  # bool, int, float, str, tuple or a class
    optional: bool  # ``| None``
    item: type | None  # the element type of ``tuple[X, ...]``, else None
    param: Param

    def allowed(self) -> str:
        """What the parameter allows, in words (the end of every error message about it)."""
        p = self.param
        if p.allowed:
            return p.allowed
        if p.choices is not None:
            text = "one of " + ", ".join(repr(c) for c in p.choices)
        elif self.base is tuple:
            text = "a list of " + _NOUNS.get(self.item or type(None), ("", f"{_name(self.item)} values"))[1]
        else:
            text = _NOUNS.get(self.base, (f"a {_name(self.base)}",))[0] + _bounds(p)
        return text + (" or None" if self.optional else "")

    def check(self, value: object) -> tuple[object, str]:
        """``(value, "")`` converted when it is allowed, else ``(value, why)`` with the words for what is."""
        if value is None and self.optional:
            return value, ""
        p = self.param
        if p.convert is not None:
            try:
                value = p.convert(value)
            except (TypeError, ValueError) as exc:
                return value, f"{self.allowed()} ({exc})"
        ok = _is_type(value, self.base, self.item)
        if ok and isinstance(value, (int, float)) and self.base in (int, float):
            ok = ((p.ge is None or value >= p.ge) and (p.gt is None or value > p.gt)
                  and (p.le is None or value <= p.le) and (p.lt is None or value < p.lt))
        if ok and p.choices is not None:
            ok = value in p.choices
        if ok and p.check is not None:
            try:
                ok = bool(p.check(value))
            except Exception:  # a predicate that cannot judge the value rejects it
                ok = False
        return value, "" if ok else self.allowed()


def declared(cls: type) -> dict[str, Declared]:
    """The declared parameters of a dataclass (init fields made with ``param``), in field order."""
    return dict(_declared(cls))


@functools.lru_cache(maxsize=None)
def _declared(cls: type) -> dict[str, Declared]:
    fields = [f for f in dataclasses.fields(cls) if f.init and _KEY in f.metadata]
    if not fields:
        return {}
    try:
        hints = typing.get_type_hints(cls)
    except Exception as exc:
        raise TypeError(f"{cls.__name__}: cannot resolve the parameter annotations: {exc}") from exc
    out = {}
    for f in fields:
        base, optional, item = _parse(hints[f.name], cls, f.name)
        out[f.name] = Declared(f.name, base, optional, item, f.metadata[_KEY])
    return out


def undeclared(cls: type) -> list[str]:
    """Init fields of ``cls`` without a ``param`` declaration (a registered strategy must have none)."""
    return [f.name for f in dataclasses.fields(cls) if f.init and _KEY not in f.metadata]


# class -> (kind, name): set by the registry that named it last (``lyra_lab._registry.Registry.register``)
_NAMED: "weakref.WeakKeyDictionary[type, tuple[str, str]]" = weakref.WeakKeyDictionary()


def name_class(cls: type, kind: str, name: str) -> None:
    """Record that ``cls`` is the ``kind`` (``chunker``…) registered as ``name`` (what rows and specs call it)."""
    _NAMED[cls] = (kind, name)


def strategy_name(owner: object) -> str:
    """The registered name of a strategy (class or instance), else its class name."""
    cls = owner if isinstance(owner, type) else type(owner)
    return _NAMED.get(cls, ("strategy", cls.__name__))[1]


def is_registered(owner: object) -> bool:
    """Whether a registry has named this strategy's class."""
    return (owner if isinstance(owner, type) else type(owner)) in _NAMED


def label(owner: object) -> str:
    """``chunker 'turn_window'``: the kind and registered name of a strategy (class or instance)."""
    cls = owner if isinstance(owner, type) else type(owner)
    kind, name = _NAMED.get(cls, ("strategy", cls.__name__))
    return f"{kind} {name!r}"


def param_error(owner: object, name: str, value: object, allowed: str) -> ConfigError:
    """The one message for a bad parameter value, also for checks that relate two parameters."""
    return ConfigError(f"{label(owner)}: parameter {name!r} = {value!r}; allowed: {allowed}")


def check_value(cls: type, name: str, value: object) -> object:
    """``value`` (converted) if parameter ``name`` of ``cls`` allows it, else ``ConfigError``."""
    decl = _declared(cls).get(name)
    if decl is None:
        return value
    value, why = decl.check(value)
    if why:
        raise param_error(cls, name, value, why)
    return value


class Strategy:
    """A base for strategy dataclasses: construction checks the declared parameters."""

    __slots__ = ()

    def __post_init__(self) -> None:
        check_params(self)


def check_params(self: object) -> None:
    """Check every declared parameter of a strategy, converting where declared (``Strategy.__post_init__``)."""
    cls: type = type(self)
    for name in _declared(cls):
        value = getattr(self, name)
        checked = check_value(cls, name, value)
        if checked is not value:
            object.__setattr__(self, name, checked)


def param_values(strategy: DataclassInstance) -> dict[str, Any]:
    """The parameters of a strategy as plain data (nested dataclasses as dicts), in field order."""
    names = [f.name for f in dataclasses.fields(strategy) if f.init]
    values = dataclasses.asdict(strategy)
    return {name: values[name] for name in names}


def from_spec(cls: type, name: str, value: object) -> object:
    """A value from a TOML/JSON spec as the field holds it: lists become tuples (to stay hashable)."""
    decl = _declared(cls).get(name)
    if isinstance(value, list) and (decl is None or decl.base is tuple):
        return tuple(value)
    return value


def _parse(hint: object, cls: type, name: str) -> tuple[type, bool, type | None]:
    """``(base, optional, item)`` of an annotation: ``int | None`` → ``(int, True, None)``."""
    optional = False
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        optional = len(members) < len(typing.get_args(hint))
        if len(members) != 1:
            raise TypeError(f"{cls.__name__}.{name}: a parameter has one type (or that type | None), not {hint}")
        hint = members[0]
    if typing.get_origin(hint) is tuple:
        args = typing.get_args(hint)
        if len(args) != 2 or args[1] is not Ellipsis:
            raise TypeError(f"{cls.__name__}.{name}: a tuple parameter is tuple[X, ...], not {hint}")
        return tuple, optional, args[0]
    if not isinstance(hint, type):
        raise TypeError(f"{cls.__name__}.{name}: cannot check values of type {hint}")
    return hint, optional, None


def _is_type(value: object, base: type, item: type | None) -> bool:
    if base is tuple:
        return isinstance(value, tuple) and all(_is_type(v, item or object, None) for v in value)
    if base is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if base is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, base)


def _bounds(p: Param) -> str:
    low = f"[{p.ge}" if p.ge is not None else f"({p.gt}" if p.gt is not None else None
    high = f"{p.le}]" if p.le is not None else f"{p.lt})" if p.lt is not None else None
    if low and high:
        return f" in {low}, {high}"
    if low:
        return f" {'>=' if p.ge is not None else '>'} {low[1:]}"
    if high:
        return f" {'<=' if p.le is not None else '<'} {high[:-1]}"
    return ""


def _name(t: object) -> str:
    return getattr(t, "__name__", str(t))
