"""Small conversations and spy strategies for the replay tests.

The spies are protocol-conforming stand-ins registered in test-local
registries (never in lyra-lab's own), so they observe what the engine hands
them: the ``now`` a rollup gets, the memory a recaller sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest

from lyra_lab._registry import Registry
from lyra_lab.chunking import CHUNKERS
from lyra_lab.corpus import Conversation, Probe, Session, Turn
from lyra_lab.recall import RECALLERS
from lyra_lab.recall._types import Hit
from lyra_lab.replay import TRIGGERS, Registries
from lyra_lab.rollup import ROLLUPS
from lyra_lab.rollup._types import RollupReport
from lyra_lab.summarize._types import Summary

T0 = datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc)


def make_conversation(sessions: list[list[float]], cid: str = "c1") -> Conversation:
    """A conversation whose session ``i`` has turns at ``T0 + hours`` for each hours value given."""
    out = []
    for si, hours in enumerate(sessions):
        sid = f"{cid}:s{si}"
        turns = tuple(
            Turn(id=f"{sid}:t{ti}", conversation_id=cid, session_id=sid, role="user" if ti % 2 == 0 else "assistant",
                 text=f"session {si} turn {ti} about topic{si}x{ti}", timestamp=T0 + timedelta(hours=h))
            for ti, h in enumerate(hours))
        out.append(Session(id=sid, conversation_id=cid, turns=turns))
    return Conversation(id=cid, sessions=tuple(out))


def make_probe(pid: str, asked_hours: float | None, cid: str = "c1", evidence: tuple[str, ...] = ()) -> Probe:
    asked = None if asked_hours is None else T0 + timedelta(hours=asked_hours)
    return Probe(id=pid, conversation_id=cid, question=f"what about {pid}?", answer="x", evidence=evidence,
                 asked_at=asked)


SUMMARIZERS = Registry("summarizer")
TEST_ROLLUPS = Registry("rollup")
TEST_RECALLERS = Registry("recaller")


@SUMMARIZERS.register("concat")
@dataclass(frozen=True)
class ConcatSummarizer:
    """One backend call per window; the summary is the backend's reply."""

    def summarize(self, chunks, backend, focus=None, on_event=None):
        text = "".join(c.text for c in chunks)
        completion = backend.complete([{"role": "user", "content": "Summarize:\n" + text}], max_tokens=32)
        ids = tuple(dict.fromkeys(t for c in chunks for t in c.turn_ids))
        return Summary(text=completion.text, turn_ids=ids, calls=(completion,), decision="single_pass")


SPY_LOG: dict[str, list] = {"rollup": [], "recall": []}


@TEST_ROLLUPS.register("spy")
@dataclass(frozen=True)
class SpyRollup:
    """Changes nothing; records ``now`` and the newest turn time in memory at each call."""

    def compact(self, store, conversation_id, request):
        newest = max(e.end for e in store.entries(conversation_id) if e.end is not None)
        SPY_LOG["rollup"].append((request.now, newest, len(store)))
        return RollupReport(ran=False, tokens_before=0, tokens_after=0, budget=request.budget, reason="spy")


@TEST_RECALLERS.register("spy")
@dataclass(frozen=True)
class SpyRecaller:
    """Returns the newest k entries; records the latest turn time it could see."""

    def recall(self, store, query, k):
        entries = sorted(store.entries(query.conversation_id), key=lambda e: (e.end, e.id), reverse=True)
        SPY_LOG["recall"].append((query.text, query.now, entries[0].end if entries else None,
                                  {t for e in entries for t in e.turn_ids}))
        return [Hit(entry=e, score=1.0 / (i + 1), rank=i) for i, e in enumerate(entries[:k])]


for _name in RECALLERS.names():
    TEST_RECALLERS.register(_name)(RECALLERS.get(_name))
for _name in ROLLUPS.names():
    TEST_ROLLUPS.register(_name)(ROLLUPS.get(_name))


@pytest.fixture
def registries() -> Registries:
    return Registries(CHUNKERS, SUMMARIZERS, TEST_ROLLUPS, TEST_RECALLERS, TRIGGERS)


@pytest.fixture
def spy_log():
    for v in SPY_LOG.values():
        v.clear()
    yield SPY_LOG
    for v in SPY_LOG.values():
        v.clear()


class Builders:
    """The helpers above, handed to tests as a fixture (``--import-mode=importlib`` cannot import conftest)."""

    T0 = T0
    conversation = staticmethod(make_conversation)
    probe = staticmethod(make_probe)


@pytest.fixture
def build() -> type[Builders]:
    return Builders
