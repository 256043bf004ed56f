"""What the rollups share: the registry, LLM calls that fail cleanly, and turn accounting."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Iterable, Sequence

from lyra_lab._registry import Registry
from lyra_lab.backends import Backend, Completion
from lyra_lab.memory import MemoryEntry
from lyra_lab.rollup._prompts import PARAMS
from lyra_lab.rollup._render import entry_line, memory_order
from lyra_lab.rollup._types import RollupReport

ROLLUPS: Registry = Registry("rollup")


class RollupFailed(Exception):
    """An LLM call of a rollup failed; the rollup commits nothing and reports ``error``."""


def ask(backend: Backend, prompt: str, max_tokens: int) -> Completion:
    """One user message, temperature 0; any exception or an empty reply becomes ``RollupFailed``."""
    try:
        completion = backend.complete([{"role": "user", "content": prompt}], max_tokens=max_tokens, **PARAMS)
    except Exception as exc:  # BackendError, a network error, a bug in a user's backend: all fail clean
        raise RollupFailed(f"{type(exc).__name__}: {exc}") from exc
    if not completion.text.strip():
        raise RollupFailed(f"{backend.name}/{backend.model} returned an empty completion")
    return completion


def transcript(entries: Iterable[MemoryEntry]) -> str:
    """The entries as dated lines, oldest first, for a prompt."""
    return "\n".join(entry_line(e) for e in sorted(entries, key=memory_order))


def short_hash(*parts: Iterable[str] | str) -> str:
    """A 10-hex-digit hash of strings (ids of what a digest covers), for stable digest ids."""
    h = hashlib.blake2b(digest_size=5)
    for part in parts:
        for item in [part] if isinstance(part, str) else part:
            h.update(item.encode("utf-8"))
            h.update(b"\x00")
    return h.hexdigest()


def check_now(now: datetime) -> None:
    if not isinstance(now, datetime) or now.tzinfo is None:
        raise ValueError(f"now must be an aware (UTC) datetime on the replay clock, got {now!r}")


def check_budget(budget: int) -> None:
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise ValueError(f"budget must be a non-negative int of tokens, got {budget!r}")


def turn_ids(entries: Iterable[MemoryEntry]) -> set[str]:
    return {t for e in entries for t in e.turn_ids}


def report(
    *,
    before: Sequence[MemoryEntry],
    after: Sequence[MemoryEntry],
    written: Sequence[MemoryEntry],
    tokens_before: int,
    tokens_after: int,
    budget: int,
    calls: Sequence[Completion],
    reason: str,
) -> RollupReport:
    """A report that accounts for every source turn of ``before``: kept, folded or dropped.

    ``folded`` are turns now covered by an entry this run wrote; ``kept`` the
    others still in memory; ``dropped`` those no longer anywhere.
    """
    in_new = turn_ids(written)
    remaining = turn_ids(after)
    source = turn_ids(before) | in_new
    return RollupReport(
        ran=True,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        budget=budget,
        kept=tuple(sorted(remaining - in_new)),
        folded=tuple(sorted(in_new & remaining)),
        dropped=tuple(sorted(source - remaining)),
        digests=tuple(e.id for e in written),
        calls=tuple(calls),
        reason=reason,
    )


def unchanged(entries: Sequence[MemoryEntry], tokens: int, budget: int, *, reason: str,
              error: str | None = None, calls: Sequence[Completion] = ()) -> RollupReport:
    """The report of a rollup that changed nothing (not needed, or failed)."""
    return RollupReport(
        ran=False, tokens_before=tokens, tokens_after=tokens, budget=budget,
        kept=tuple(sorted(turn_ids(entries))), calls=tuple(calls), error=error, reason=reason,
    )
