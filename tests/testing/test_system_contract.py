"""``check_system_contract`` catches each broken promise, on fake systems that break one each (named as fakes),
and passes a fake that keeps them all; every session it opened is closed."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import datetime
from typing import Sequence

import pytest

from lyra_lab.backends import Backend, Embedder
from lyra_lab.corpus import Conversation, Session, Turn
from lyra_lab.systems import Declared, IngestReport, Needs, SystemHit
from lyra_lab.testing import (ContractQuery, InvariantViolation, check_memory_system, check_system_contract,
                              fixed_case)

_RUN = itertools.count()


@dataclass
class FakeSession:
    """A session of ``FakeSystem``: word-overlap search over the turns, broken as its system says."""

    system: "FakeSystem"
    turns: list[Turn] = field(default_factory=list)

    def ingest(self, turns: Sequence[Turn], *, final: bool = False) -> IngestReport:
        self.turns += turns
        return IngestReport(turns=len(turns), items=len(turns))

    def query(self, question: str, k: int, *, now: datetime | None = None) -> Sequence[SystemHit]:
        if not self.turns and self.system.fault == "empty":
            raise RuntimeError("no collection yet")  # what a vector store does before its first write
        words = set(question.split())
        ranked = sorted(self.turns, key=lambda t: -len(words & set(t.text.split())))
        hits = [SystemHit(t.text, 1.0, (t.id,), t.timestamp, "turn", t.id) for t in ranked]
        if self.system.fault == "limit":
            return hits[:30]  # memorybench's hard-coded 30
        if self.system.fault == "museum" and "museum" in words and hits:  # a fault the fixed case does not meet
            hits = [hits[0], *hits]
        if self.system.fault == "duplicate" and hits:
            hits = [hits[0], *hits]
        if self.system.fault == "random":
            hits = [SystemHit(f"{h.text} #{next(_RUN)}", h.score, h.turn_ids, h.when, h.kind) for h in hits]
        if self.system.fault == "phantom":
            hits = [SystemHit("something remembered from nowhere")]
        return hits[:k]

    def contents(self) -> Sequence[SystemHit] | None:
        return None

    def close(self) -> None:
        self.system.closed.append(True)

    def __enter__(self) -> "FakeSession":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class FakeSystem:
    """A fake memory system; ``fault`` names the promise it breaks ('' keeps them all)."""

    fault: str = ""
    closed: list[bool] = field(default_factory=list, compare=False, hash=False)
    opened: list[bool] = field(default_factory=list, compare=False, hash=False)

    def label(self) -> str:
        return f"fake-{self.fault or 'ok'}"

    def needs(self) -> Needs:
        return Needs()

    def traces(self) -> bool:
        return True

    def declare(self) -> Declared:
        return Declared(in_process=True)

    def notice(self) -> str:
        return ""

    def open(self, conversation_id: str, backend: Backend | None, embedder: Embedder | None) -> FakeSession:
        self.opened.append(True)
        return FakeSession(self)


def test_a_system_that_keeps_every_promise_passes_and_is_closed_each_time():
    system = FakeSystem()
    check_system_contract(system, deterministic=True, max_examples=15)  # type: ignore[arg-type]
    assert len(system.opened) == len(system.closed) >= 15


@pytest.mark.parametrize("fault, promise", [("limit", "at most k"), ("duplicate", "no duplicate hits"),
                                            ("random", "deterministic"), ("phantom", "answers an empty memory")])
def test_each_broken_promise_is_caught_and_named(fault, promise):
    system = FakeSystem(fault)
    with pytest.raises(InvariantViolation) as caught:
        check_system_contract(system, deterministic=True, max_examples=15, shrink=False)  # type: ignore[arg-type]
    assert caught.value.invariant == promise and "fake" in str(caught.value)
    assert len(system.opened) == len(system.closed)  # a failing check still closes what it opened


def test_a_nondeterministic_system_that_does_not_claim_to_be_passes():
    check_system_contract(FakeSystem("random"), deterministic=False, max_examples=5)  # type: ignore[arg-type]


def test_an_empty_memory_that_cannot_answer_fails():
    with pytest.raises(RuntimeError, match="no collection yet"):
        check_system_contract(FakeSystem("empty"), max_examples=3, shrink=False)  # type: ignore[arg-type]


def test_a_drawn_failure_shrinks_to_a_small_example():
    check_memory_system(FakeSystem("museum"), *fixed_case())  # type: ignore[arg-type]  # the fixed case passes
    with pytest.raises(InvariantViolation) as caught:
        check_system_contract(FakeSystem("museum"), max_examples=40)  # type: ignore[arg-type]
    assert caught.value.detail == "query 'museum' k=2 returned ('id', 'D1:1') more than once"  # one turn, k = 2


def test_one_conversation_by_hand_with_k_below_the_turns():
    turns = tuple(Turn(f"D1:{i}", "c", "c/S1", "user", text) for i, text in
                  enumerate(["kayak trip", "kayak again", "pottery class"], 1))
    conversation = Conversation("c", (Session("c/S1", "c", turns),))
    [first, second] = check_memory_system(FakeSystem(), conversation,  # type: ignore[arg-type]
                                          [ContractQuery("kayak", 1), ContractQuery("pottery kayak", 5)])
    assert [h.turn_ids for h in first] == [("D1:1",)] and len(second) == 3
    with pytest.raises(InvariantViolation, match="query 'kayak' k=3 returned .* more than once"):
        check_memory_system(FakeSystem("duplicate"), conversation, [ContractQuery("kayak", 3)])  # type: ignore[arg-type]
