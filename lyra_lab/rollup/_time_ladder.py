"""The time ladder: fold old memory into day, then week, then month digests until it fits.

Like a backup rotation: yesterday's turns become a day digest, last week's day
digests a week digest, last month's week digests a month digest.  The ladder
only climbs as far as the budget needs, oldest periods first, and only when
the memory exceeds ``budget * headroom`` (so it does not run on every turn);
it then compacts down to ``budget``.  Ages are measured on the replay clock
(``now``), never the wall clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Callable

from lyra_lab.backends import Completion
from lyra_lab.memory import EntryKind, MemoryEntry, entry_line, memory_order, render_memory
from lyra_lab.rollup import _prompts
from lyra_lab.rollup._base import (
    ROLLUPS, BaseRollup, Compaction, Edit, ask, covered_turns, short_hash, skip, transcript,
)
from lyra_lab.rollup._periods import Grain, period_key
from lyra_lab._params import param, param_error

_NEVER = datetime.min.replace(tzinfo=timezone.utc)


@ROLLUPS.register("time_ladder")
@dataclass(frozen=True)
class TimeLadder(BaseRollup):
    """Day → week → month digests of entries older than 1 / 7 / 30 days.

    Args:
        headroom: compaction starts when the rendered memory exceeds ``budget * headroom``.
        day_after_days, week_after_days, month_after_days: the age (days, by
            entry end time) from which raw entries / day digests / week digests
            are folded into the next rung.
        max_tokens: the completion limit of each digest call.
        max_prompt_tokens: if set, a period whose notes exceed it (by ``count``)
            is summarized in consecutive parts of at most that size, one call
            each, and the digest joins the part summaries: a small-context
            model then never gets a prompt it must refuse (which would fail
            every compaction from then on).

    Rung 1 folds level-0 entries; rungs 2 and 3 fold the digests of the rung
    below.  An entry belongs to the period of its end time; undated entries
    are never folded, only dropped.  A period that already has a digest of the
    rung is re-folded together with it, so there is one digest per period
    (per month part, for an ISO week that straddles two months).
    If folding all eligible periods is not enough, the oldest entries are
    dropped (reported in ``dropped``).  If any LLM call fails, nothing is
    written and the report carries ``error``.
    """

    headroom: float = param(1.25, ge=1)
    day_after_days: float = param(1, ge=0)
    week_after_days: float = param(7, ge=0, allowed="a number >= day_after_days")
    month_after_days: float = param(30, ge=0, allowed="a number >= week_after_days")
    max_tokens: int = param(200, ge=1)
    max_prompt_tokens: int | None = param(None, ge=1)

    def __post_init__(self) -> None:
        super().__post_init__()
        for earlier, later in (("day_after_days", "week_after_days"), ("week_after_days", "month_after_days")):
            if getattr(self, later) < getattr(self, earlier):
                raise param_error(self, later, getattr(self, later),
                                  f"a number >= {earlier} ({getattr(self, earlier)})")

    @property
    def rungs(self) -> tuple[tuple[int, Grain, float], ...]:
        return ((1, "day", self.day_after_days), (2, "week", self.week_after_days),
                (3, "month", self.month_after_days))

    def step(self, compaction: Compaction) -> Edit:
        before, budget, count = compaction.before, compaction.request.budget, compaction.request.count
        if compaction.tokens_before <= budget * self.headroom:
            return skip("under budget x headroom")
        work = {e.id: e for e in before}
        written: dict[str, MemoryEntry] = {}

        def over() -> bool:
            return count(render_memory(work.values())) > budget

        for level, grain, after_days in self.rungs:
            groups = _eligible(work.values(), level, grain, compaction.request.now - timedelta(days=after_days))
            for period, part in sorted(groups):
                if not over():
                    break
                group = groups[(period, part)]
                digest, completions = self._fold(group, level, grain, period, compaction)
                compaction.calls.extend(completions)  # after all parts: a failed part records none of them
                for entry in group:
                    del work[entry.id]
                    written.pop(entry.id, None)
                work[digest.id] = written[digest.id] = digest
        reason = "folded"
        if over():
            reason = "folded and dropped oldest" if written else "dropped oldest"
            _drop_oldest(work, budget, count)
        kept_new = [e for e in written.values() if e.id in work]
        return Edit(reason, add=kept_new, remove=[e.id for e in before if e.id not in work])

    def _fold(self, group: list[MemoryEntry], level: int, grain: Grain, period: str,
              compaction: Compaction) -> tuple[MemoryEntry, list[Completion]]:
        """The digest of ``group`` for ``period`` and the calls it took (recorded by the caller, all or none)."""
        backend, count = compaction.request.backend, compaction.request.count
        parts = self._parts(group, count)
        completions = [ask(backend, _prompts.DIGEST.format(period=period, content=transcript(part)), self.max_tokens,
                           f"{grain} digest {period}" + (f" part {k}/{len(parts)}" if len(parts) > 1 else ""))
                       for k, part in enumerate(parts, 1)]
        turns = covered_turns(group)
        sessions = tuple(sorted({s for e in group for s in e.session_ids}))
        conversation_id = group[0].conversation_id
        digest = MemoryEntry(
            id=f"digest:{grain}:{period}:{short_hash(conversation_id, turns, sorted(e.id for e in group))}",
            conversation_id=conversation_id,
            kind=EntryKind.DIGEST,
            text=" ".join(c.text.strip() for c in completions),
            turn_ids=turns,
            session_ids=sessions,
            start=min(e.start or e.end for e in group),  # type: ignore[type-var]
            end=max(e.end for e in group),  # type: ignore[type-var]
            level=level,
            period=period,
            meta={"rollup": "time_ladder", "folded_entries": len(group), "calls": len(completions),
                  "model": completions[0].model},
        )
        return digest, completions

    def _parts(self, group: list[MemoryEntry], count: Callable[[str], int]) -> list[list[MemoryEntry]]:
        """The group in time order, cut into runs whose notes fit ``max_prompt_tokens`` (>= 1 entry each)."""
        ordered = sorted(group, key=memory_order)
        if self.max_prompt_tokens is None:
            return [ordered]
        parts: list[list[MemoryEntry]] = [[]]
        size = 0  # a running sum of line counts (+1 per newline): linear, and close enough for a cap
        for entry in ordered:
            lines = count(entry_line(entry)) + 1
            if parts[-1] and size + lines > self.max_prompt_tokens:
                parts.append([])
                size = 0
            parts[-1].append(entry)
            size += lines
        return parts


def _eligible(entries, level: int, grain: Grain, cutoff: datetime) -> dict[tuple[str, str], list[MemoryEntry]]:
    """``(period, month)`` → entries to fold into one rung-``level`` digest, oldest first when sorted.

    ISO weeks straddle months, so a week is split at the month boundary
    (one digest per part, both keyed by the week): month digests then nest
    week digests exactly and every digest lies inside its period.
    """
    def key(e: MemoryEntry) -> tuple[str, str]:
        if e.end is None:  # callers only key dated entries
            raise ValueError(f"memory entry {e.id!r} has no end time to key by")
        return (period_key(e.end, grain), period_key(e.end, "month") if grain == "week" else "")

    groups: dict[tuple[str, str], list[MemoryEntry]] = {}
    for e in entries:
        lower = e.level == level - 1 and (level == 1 or e.kind == EntryKind.DIGEST)
        if lower and e.end is not None and e.end <= cutoff:
            groups.setdefault(key(e), []).append(e)
    for e in entries:  # an existing digest of this rung joins its period's re-fold
        if e.kind == EntryKind.DIGEST and e.level == level and e.end is not None and key(e) in groups:
            groups[key(e)].append(e)
    return groups


def _drop_oldest(work: dict[str, MemoryEntry], budget: int, count: Callable[[str], int]) -> None:
    """Remove the oldest entries (by end time; undated first) until the memory fits ``budget``."""
    order = sorted(work.values(), key=lambda e: (e.end or e.start or _NEVER, -e.level, e.id))

    def fits(n_dropped: int) -> bool:
        return count(render_memory(order[n_dropped:])) <= budget

    # Binary search on how many to drop (token counts are near-monotone in it), then verify.
    lo, hi = 0, len(order)
    while lo < hi:
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid + 1
    while lo < len(order) and not fits(lo):
        lo += 1
    for entry in order[:lo]:
        del work[entry.id]
