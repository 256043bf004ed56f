"""Strategies registered by name, built from plain dicts.

A strategy is a frozen dataclass of its parameters.  A ``Registry`` maps names
to those classes so an experiment file can say
``{"name": "token_budget", "max_tokens": 2000}``.  Registries are explicit
objects (one per component kind) that callers pass around; tests build their
own instead of patching a global.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Generic, Mapping, TypeVar

from lyra_lab._errors import ConfigError
from lyra_lab._params import name_class, param_values, strategy_name
from lyra_lab._records import build_fields

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["ConfigError", "Registry"]

T = TypeVar("T")


class Registry(Generic[T]):
    """Names → strategy classes for one kind of component (``chunker``, ``recaller``…)."""

    def __init__(self, kind: str):
        self.kind = kind
        self._classes: dict[str, type] = {}

    def register(self, name: str) -> Callable[[type], type]:
        """Class decorator: register a frozen dataclass under ``name``."""

        def decorate(cls: type) -> type:
            if not dataclasses.is_dataclass(cls):
                raise TypeError(f"{self.kind} {name!r}: {cls.__name__} must be a dataclass")
            if name in self._classes and self._classes[name] is not cls:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._classes[name] = cls
            name_class(cls, self.kind, name)
            return cls

        return decorate

    def names(self) -> list[str]:
        return sorted(self._classes)

    def extended(self, **classes: type) -> "Registry[T]":
        """A new registry of the same kind: these names plus ``classes`` (name → class).

        A class replaces any same-named entry, so re-running a notebook cell that redefines a class just works.  ``self``
        is left as it is (a class's name is the one the registry that named it last gave it).

        >>> import dataclasses
        >>> from lyra_lab.chunking import CHUNKERS
        >>> @dataclasses.dataclass(frozen=True)
        ... class Mine:
        ...     size: int = 3
        >>> mine = CHUNKERS.extended(mine=Mine)
        >>> mine.build({"name": "mine", "size": 5}), "mine" in CHUNKERS.names(), "line_budget" in mine.names()
        (Mine(size=5), False, True)
        """
        out: Registry[T] = Registry(self.kind)
        out._classes = dict(self._classes)
        for name, cls in classes.items():
            out._classes.pop(name, None)
            out.register(name)(cls)
        return out

    def get(self, name: str) -> type:
        try:
            return self._classes[name]
        except KeyError:
            known = ", ".join(self.names()) or "none"
            raise ConfigError(f"unknown {self.kind} {name!r}; known: {known}") from None

    def build(self, spec: Mapping[str, Any] | str | T) -> T:
        """Build a strategy from ``{"name": ..., **params}`` (or a bare name, or an instance)."""
        if isinstance(spec, str):
            spec = {"name": spec}
        if not isinstance(spec, Mapping):
            return spec  # already a strategy object
        if "name" not in spec:
            raise ConfigError(f"{self.kind} spec {dict(spec)!r} has no 'name'")
        cls = self.get(spec["name"])
        params = {k: v for k, v in spec.items() if k != "name"}
        return build_fields(cls, params, f"{self.kind} {spec['name']!r}", error=ConfigError)

    @staticmethod
    def spec(strategy: DataclassInstance) -> dict[str, Any]:
        """The plain-dict spec of a strategy: its registered name and its parameters."""
        return {"name": strategy_name(strategy), **param_values(strategy)}
