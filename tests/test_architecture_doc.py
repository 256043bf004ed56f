"""docs/architecture.md's "Adding a strategy" example runs as written and fails as it says."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

from lyra_lab.recall import Query
from lyra_lab import ConfigError
from lyra_lab.memory import MemoryEntry, MemoryStore

DOC = Path(__file__).parents[1] / "docs" / "architecture.md"


def example(monkeypatch) -> dict:
    """Run the doc's python block as a module of its own (dataclasses look their module up)."""
    text = DOC.read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S)
    assert code, "docs/architecture.md lost its python example"
    module = types.ModuleType("architecture_doc")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code.group(1), str(DOC), "exec"), module.__dict__)
    return module.__dict__


def test_the_documented_recaller_is_one_class_with_one_method_and_ranks_by_overlap(monkeypatch):
    ns = example(monkeypatch)
    cls = ns["WordOverlap"]
    own = {name for name, value in vars(cls).items() if callable(value) and not name.startswith("__")}
    assert own == {"score"}
    store = MemoryStore([MemoryEntry(id=t, conversation_id="c", kind="turn", text=t, turn_ids=(t,))
                         for t in ("the cat sat", "a dog ran", "cat and dog")])
    hits = ns["recallers"].build("word_overlap").recall(store, Query("where is the cat", "c"), 2)
    # "where", "the", "cat" are the words of >= 3 letters: "the cat sat" shares two, "cat and dog" one
    assert [(h.entry.text, h.score, h.rank) for h in hits] == [("the cat sat", 2.0, 0), ("cat and dog", 1.0, 1)]


def test_the_documented_error_line_is_the_one_raised(monkeypatch):
    ns = example(monkeypatch)
    quoted = re.search(r"`(recaller 'word_overlap':\s+parameter .*?)`", DOC.read_text(encoding="utf-8"), re.S)
    assert quoted
    expected = " ".join(quoted.group(1).split())
    for build in (lambda: ns["WordOverlap"](min_len=0),
                  lambda: ns["recallers"].build({"name": "word_overlap", "min_len": 0})):
        with pytest.raises(ConfigError) as err:
            build()
        assert str(err.value) == expected
