"""``hit_line_counts``: the renderer's kept counts of an entry's context line are the counter's own."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from lyra_lab.backends import LineMemoCounter, token_counter
from lyra_lab.memory import MemoryEntry, hit_line, hit_line_counts

TEXTS = ["hello world", "Ana: I moved to Lisbon\nBo: nice!  Really?", "  lead and trail  ", "x", "",
         "naïve café — ‘quoted’ 2023-05-08", "tabs\tand\u00a0nbsp end "]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-4"])
def test_hit_line_counts_are_the_counts_of_the_line(text, model):
    plain = token_counter(model)
    when = datetime(2023, 5, 8, tzinfo=timezone.utc)
    entry = MemoryEntry(id="e", conversation_id="c", kind="turn", text=text, turn_ids=(), start=when, end=when)
    line = hit_line(entry)
    expected = (plain(line), plain(line + "\n"))
    assert hit_line_counts(entry, plain) == expected  # a plain counter counts the line itself
    assert hit_line_counts(entry, LineMemoCounter(plain)) == expected  # the renderer's kept counts
