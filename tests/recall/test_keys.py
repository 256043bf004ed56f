"""Index keys: dated texts, same-session windows, and a keyed view that follows its store."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import key_texts, keyed_view

MAY8 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)


def turn(i, text, session="s1", when=MAY8, cid="c"):
    return MemoryEntry(f"{cid}:{i}", cid, "turn", text, (f"t{i}",), (session,), when, when)


def test_dated_keys_put_the_day_before_the_text():
    entries = [turn(1, "Caroline: hi"), MemoryEntry("c:2", "c", "turn", "Mel: undated", ("t2",))]
    assert key_texts(entries, "dated") == ["[8 May 2023] Caroline: hi", "Mel: undated"]


def test_windows_stop_at_the_session_boundary():
    entries = [turn(1, "a"), turn(2, "b"), turn(3, "c"), turn(4, "d", session="s2"), turn(5, "e", session="s2")]
    assert key_texts(entries, "text", 1) == ["a\nb", "a\nb\nc", "b\nc", "d\ne", "d\ne"]
    assert key_texts(entries, "text", 2)[0] == "a\nb\nc"


def test_unknown_keys_are_rejected():
    with pytest.raises(ValueError, match="keys must be one of"):
        key_texts([turn(1, "a")], "facts")


def test_the_view_re_adds_only_entries_whose_key_changed():
    store = MemoryStore([turn(1, "a"), turn(2, "b"), turn(9, "other", cid="x")])
    view = keyed_view(store, "c", "text", 1)
    assert [view.store.get(e.id).text for e in view.entries] == ["a\nb", "a\nb"]
    before = view.store.version
    store.add(turn(3, "c"))
    view = keyed_view(store, "c", "text", 1)
    # turn 2's key gained "c" (remove + add) and turn 3 is new (add); turn 1 is untouched
    assert view.store.changes_since(before) == [("remove", "c:2"), ("add", "c:2"), ("add", "c:3")]
    assert view.store.get("c:2").text == "a\nb\nc"
    assert view.entries[1] is store.get("c:2")  # hits return the original entry, not its key
    assert view.sessions.tolist() == [0, 0, 0]
