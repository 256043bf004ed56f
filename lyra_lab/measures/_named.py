"""Tables of named things (answer prompts, judge prompts): keyed by their name, looked up with one clear error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, TypeVar

from lyra_lab._registry import ConfigError


class Named(Protocol):
    """Anything with a ``name``."""

    @property
    def name(self) -> str: ...


N = TypeVar("N", bound=Named)


def by_name(*items: N) -> dict[str, N]:
    """``items`` keyed by their ``name``, in the order given."""
    return {item.name: item for item in items}


def look_up(table: Mapping[str, N], name: str, what: str) -> N:
    """``table[name]``; an unknown name is a ``ConfigError`` naming ``what`` it is and the known names.

    >>> look_up({"short_v1": "a prompt"}, "short_v2", "answer prompt")
    Traceback (most recent call last):
    ...
    lyra_lab._errors.ConfigError: unknown answer prompt 'short_v2'; known: short_v1
    """
    try:
        return table[name]
    except KeyError:
        raise ConfigError(f"unknown {what} {name!r}; known: {', '.join(sorted(table))}") from None
