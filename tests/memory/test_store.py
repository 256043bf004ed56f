from datetime import datetime, timezone

import pytest

from lyra_lab.corpus import Turn
from lyra_lab.memory import MemoryEntry, MemoryStore


def entry(i: int, conv: str = "c") -> MemoryEntry:
    t = Turn(f"t{i}", conv, "s", "user", f"text {i}", datetime(2024, 1, 1, i, tzinfo=timezone.utc), "Ann")
    return MemoryEntry.from_turn(t)


def test_from_turn_keeps_provenance():
    e = entry(3)
    assert e.id == "turn:t3" and e.turn_ids == ("t3",) and e.session_ids == ("s",)
    assert e.text == "Ann: text 3" and e.start == e.end == datetime(2024, 1, 1, 3, tzinfo=timezone.utc)


def test_apply_is_all_or_nothing():
    store = MemoryStore([entry(1), entry(2)])
    before = store.dumps()
    with pytest.raises(KeyError):
        store.apply(add=[entry(3)], remove=["turn:t1", "missing"])
    with pytest.raises(ValueError, match="duplicate"):
        store.apply(add=[entry(3), entry(3)], remove=["turn:t1"])
    assert store.dumps() == before and store.version == 2


def test_apply_remove_then_add_and_change_log():
    store = MemoryStore([entry(1), entry(2)])
    v = store.version
    store.apply(add=[entry(1)], remove=["turn:t1"])  # re-adding a removed id is allowed
    assert store.changes_since(v) == [("remove", "turn:t1"), ("add", "turn:t1")]
    assert [e.id for e in store] == ["turn:t2", "turn:t1"]


def test_entries_filter_by_conversation_and_kind():
    store = MemoryStore([entry(1, "a"), entry(2, "b")])
    assert [e.id for e in store.entries("b")] == ["turn:t2"]
    assert store.entries("a", kind="digest") == []
    assert len(store) == 2 and "turn:t1" in store
