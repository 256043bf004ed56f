"""The time ladder once with the real bundled SmolLM2 model (slow)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from lyra_lab.backends import token_counter
from lyra_lab.corpus import Turn
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.rollup import CompactRequest, TimeLadder, render_memory

T0 = datetime(2023, 5, 8, 18, tzinfo=timezone.utc)
LINES = [
    ("user", "I adopted a cat named Luna from the shelter today."),
    ("assistant", "Congratulations! How is Luna settling in?"),
    ("user", "She hides under the bed, but she ate her dinner."),
    ("assistant", "That is normal for the first days. Give her a quiet corner."),
    ("user", "Tomorrow I start my new job as a nurse at the city hospital."),
    ("assistant", "Good luck with the first shift at the hospital!"),
]


@pytest.mark.slow
def test_time_ladder_compacts_with_the_local_model(local_backend):
    turns = [Turn(f"t{i}", "c", "s1" if i < 4 else "s2", role, text, T0 + timedelta(days=i // 2, minutes=i))
             for i, (role, text) in enumerate(LINES)]
    store = MemoryStore([MemoryEntry.from_turn(t) for t in turns])
    count = token_counter("gpt-4o-mini")
    before = count(render_memory(store.entries("c")))
    report = TimeLadder(max_tokens=32).compact(store, "c", CompactRequest(
        budget=before // 2, backend=local_backend, now=T0 + timedelta(days=10), count=count))
    assert report.error is None, report.error
    assert report.ran and report.tokens_after <= before // 2
    digests = store.entries("c", kind="digest")
    assert digests and all(d.text.strip() for d in digests)
    assert all(c.backend == local_backend.name and c.usage.completion_tokens <= 32 for c in report.calls)
    # Every turn is accounted for: kept, folded into a digest naming it, or dropped.
    assert set(report.kept) | set(report.folded) | set(report.dropped) == {t.id for t in turns}
