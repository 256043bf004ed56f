"""A new recaller is one class with one method: scored by word overlap, run through replay and a grid.

Memory of the conversation below after its one session (``keep_raw`` and the
``turn_window`` chunker with one turn per chunk), in store order::

    turn:s0:t0  "user: my dog is called Biscuit"
    turn:s0:t1  "assistant: what a lovely name for a dog"
    turn:s0:t2  "user: I also have a cat called Miso"
    chunk 0..2  the same three lines, each after a "[2024-01-01 09:00]"-style stamp

The word-overlap score is the number of distinct lower-cased words shared with
the question; the stamps share no word with the questions used here, so each
chunk scores as its turn, and ties keep store order (turns before chunks).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest

from lyra_lab.backends import FakeLLM
from lyra_lab.chunking import CHUNKERS
from lyra_lab.corpus import Conversation, Corpus, Probe, Session, Turn
from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment
from lyra_lab.memory import MemoryEntry
from lyra_lab.recall import BaseRecaller, Query, RECALLERS
from lyra_lab.replay import TRIGGERS, Pipeline, Registries, ReplaySetup, replay, replay_iter
from lyra_lab.rollup import ROLLUPS
from lyra_lab.summarize import SUMMARIZERS
from lyra_lab.testing import check_recall


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


@dataclass(frozen=True)
class WordOverlap(BaseRecaller):
    def score(self, query: str, entry: MemoryEntry) -> float:
        return len(_words(query) & _words(entry.text))


T0 = datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc)
TEXTS = ["my dog is called Biscuit", "what a lovely name for a dog", "I also have a cat called Miso"]
TURNS = tuple(Turn(id=f"s0:t{i}", conversation_id="c", session_id="s0", role="user" if i % 2 == 0 else "assistant",
                   text=text, timestamp=T0 + timedelta(hours=i)) for i, text in enumerate(TEXTS))
CONVERSATION = Conversation(id="c", sessions=(Session(id="s0", conversation_id="c", turns=TURNS),))
PROBES = [
    Probe(id="dog", conversation_id="c", question="what is my dog called", answer="Biscuit", evidence=("s0:t0",),
          asked_at=T0 + timedelta(hours=2.5)),
    Probe(id="called", conversation_id="c", question="called", answer="Miso", evidence=("s0:t2",)),
]
REGISTRIES = Registries(CHUNKERS, SUMMARIZERS, ROLLUPS, RECALLERS.extended(word_overlap=WordOverlap), TRIGGERS)


def _short(entry_id: str) -> str:
    """``chunk:00000:1`` for ``chunk:00000:1:<key hash>``; turn ids as they are."""
    return entry_id.rsplit(":", 1)[0] if entry_id.startswith("chunk:") else entry_id


def test_a_one_method_recaller_runs_through_replay_with_hand_computed_ranks():
    pipeline = Pipeline.from_dict({"chunker": {"name": "turn_window", "max_turns": 1}}, REGISTRIES)
    recaller = REGISTRIES.recallers.build("word_overlap")
    run = replay_iter(CONVERSATION, PROBES, pipeline, ReplaySetup(FakeLLM(), recallers={"overlap": recaller}, k=4))
    deeper = {o.probe.id: [_short(e.id) for e in o.ranking.entries(100)] for asked in run for o in asked}
    dog, called = run.result.outcomes["overlap"]

    # memory holds each turn once (a one-turn chunk beside its raw turn is not stored twice)
    # "what is my dog called": t0 shares my/dog/is/called (4), t1 what/dog (2), t2 called (1)
    assert [(_short(h.entry.id), h.score, h.rank, h.via) for h in dog.hits] == [
        ("turn:s0:t0", 4.0, 0, "word_overlap"), ("turn:s0:t1", 2.0, 1, "word_overlap"),
        ("turn:s0:t2", 1.0, 2, "word_overlap"),
    ]
    # the deeper ranking for equal-budget scores goes on to every entry
    assert deeper["dog"] == ["turn:s0:t0", "turn:s0:t1", "turn:s0:t2"]
    assert dog.context.startswith("[2024-01-01] user: my dog is called Biscuit\n[2024-01-01] assistant: what a lovely")

    # "called": t0 and t2 score 1, t1 0; ties in store order
    assert [(_short(h.entry.id), h.score) for h in called.hits] == [
        ("turn:s0:t0", 1.0), ("turn:s0:t2", 1.0), ("turn:s0:t1", 0.0)]
    assert deeper["called"] == ["turn:s0:t0", "turn:s0:t2", "turn:s0:t1"]


def test_the_base_checks_k_and_hits_follow_the_recall_invariants():
    store = replay(CONVERSATION, [], Pipeline.from_dict({"chunker": "turn_window"}, REGISTRIES), ReplaySetup(FakeLLM())).store
    hits = check_recall(WordOverlap(), store, Query("a cat called", "c"), 4)
    # t2 shares a/cat/called (3), and so does the one chunk of all three turns; t0 shares "called" (1),
    # t1 "a" (1): the tie keeps store order
    assert [(_short(h.entry.id), h.score) for h in hits] == [
        ("turn:s0:t2", 3.0), ("chunk:00000:0", 3.0), ("turn:s0:t0", 1.0), ("turn:s0:t1", 1.0)]
    assert WordOverlap().recall(store, Query("dog", "c"), 0) == []
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="k must be a non-negative int"):
            WordOverlap().recall(store, Query("dog", "c"), bad)


GRID = """
name = "custom-recaller"
[corpus]
path = "tiny.jsonl"
[grid]
chunkers = [{ name = "turn_window", max_turns = 1 }]
summarizers = ["none"]
recallers = ["word_overlap", "bm25"]
[run]
backends = ["fake"]
embedders = ["hashing"]
ks = [1, 3]
cache = "off"
"""


def test_a_registered_custom_recaller_runs_in_an_experiment_grid(tmp_path):
    Corpus(name="tiny", conversations=(CONVERSATION,), probes=tuple(PROBES), format="native").save(
        tmp_path / "tiny.jsonl")
    (tmp_path / "exp.toml").write_text(textwrap.dedent(GRID), encoding="utf-8")
    spec = ExperimentSpec.from_toml(tmp_path / "exp.toml", REGISTRIES)
    df = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": FakeLLM()}))
    mine = df[(df["recaller"] == "word_overlap") & df["metric"].isin(["evidence_recall@1", "evidence_recall@3"])]
    got = {(r.probe_id, r.metric): r.value for r in mine.itertuples()}
    # "dog" (evidence t0): t0 is hit 1.  "called" (evidence t2): hits t0, t2, chunk 0 -> t2 only at k=3.
    assert got == {("dog", "evidence_recall@1"): 1.0, ("dog", "evidence_recall@3"): 1.0,
                   ("called", "evidence_recall@1"): 0.0, ("called", "evidence_recall@3"): 1.0}
