"""The contract every memory system keeps, as property tests a user runs on their own adapter.

A ``systems.MemorySystem`` (mem0, an MCP server, an HTTP service, your own) must:

- return at most the ``k`` results asked for (two public adapters silently did not: a ``limit``
  swallowed by ``**kwargs``, a hard-coded 30);
- never return the same item twice in one answer;
- answer a fresh, empty memory (with nothing: there is nothing to return);
- when it claims to be deterministic, give two fresh memories fed the same turns the same answers.

``check_memory_system`` checks one conversation and a few queries; ``check_system_contract`` draws
them with hypothesis (conversations of a small vocabulary, so queries find something) and shrinks a
failure to a small example::

    from lyra_lab.backends import HashingEmbedder
    from lyra_lab.testing import check_system_contract

    def test_my_adapter_keeps_the_contract():
        check_system_contract(MySystem(), embedder=HashingEmbedder(), deterministic=True, max_examples=5)

Every session the checks open is closed, also when a check fails.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Sequence, TypedDict, Unpack

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from lyra_lab.backends import Backend, Embedder
from lyra_lab.corpus import ROLES, Conversation, Session, Turn
from lyra_lab.systems import MemorySystem, SystemHit
from lyra_lab.testing._chunk_invariants import InvariantViolation

#: Words the drawn turns and queries are made of: content words a word-matching memory can find, some
#: of them beyond ASCII.
VOCABULARY = ("painting", "Lisbon", "guitar", "marathon", "sunflowers", "adoption", "kayak", "école",
              "Zoë", "李雷", "pottery", "camping", "violin", "Jürgen", "museum", "bakery")


_EPOCH = datetime(2021, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class ContractQuery:
    """One question of a contract check and how many results it asks for.

    Attributes:
        text: the question.
        k: the most results asked for (>= 1).
    """

    text: str
    k: int


def hit_key(hit: SystemHit) -> tuple[object, ...]:
    """What makes two hits of one answer the same item: the system's id, else its text and source turns."""
    return ("id", hit.id) if hit.id else ("text", hit.text, hit.turn_ids)


def _comparable(hit: SystemHit) -> tuple[object, ...]:
    # A system's own ids may be fresh per memory (mem0's uuids); a deterministic system still
    # returns the same text, sources, kind, time and score (rounded: scores cross JSON and float32).
    score = round(hit.score, 6) if math.isfinite(hit.score) else hit.score
    return (hit.text, hit.turn_ids, hit.kind, hit.when, hit.until, score)


class _Named(str):
    """A system's name as ``InvariantViolation`` prints its subject (as it is, not quoted again)."""

    def __repr__(self) -> str:
        return str(self)


def _name(system: MemorySystem) -> _Named:
    try:
        return _Named(f"memory system {system.label()!r}")
    except Exception:  # noqa: BLE001 - a label that fails still leaves the type to name it
        return _Named(type(system).__name__)


def check_answer(system: MemorySystem, hits: Sequence[SystemHit], query: ContractQuery) -> None:
    """Check one answer: ``SystemHit``s, at most ``query.k`` of them, none twice.

    Raises:
        InvariantViolation: naming the system, the broken promise and the query.
    """
    where = f"query {query.text!r} k={query.k}"
    if len(hits) > query.k:
        raise InvariantViolation(_name(system), "at most k", f"{len(hits)} hits for {where}")
    for i, hit in enumerate(hits):
        if not isinstance(hit, SystemHit):
            raise InvariantViolation(_name(system), "hits are SystemHits",
                                     f"hit {i} of {where} is {type(hit).__name__}")
    keys = [hit_key(h) for h in hits]
    twice = sorted({str(key) for key in keys if keys.count(key) > 1})
    if twice:
        raise InvariantViolation(_name(system), "no duplicate hits", f"{where} returned {twice[0]} more than once")


class ContractOptions(TypedDict, total=False):
    """What a contract check gives the system and what it holds it to (each optional).

    Attributes:
        backend: the cell's backend, for a system that makes LLM calls (default None).
        embedder: the cell's embedder, for a system that embeds (default None).
        deterministic: the system claims the same turns give the same answers (default False).
    """

    backend: Backend | None
    embedder: Embedder | None
    deterministic: bool


def _answers(system: MemorySystem, conversation: Conversation, queries: Sequence[ContractQuery],
             options: ContractOptions, empty_first: bool) -> list[tuple[SystemHit, ...]]:
    turns = list(conversation.turns())
    with system.open(conversation.id, options.get("backend"), options.get("embedder")) as session:
        if empty_first:
            for query in queries:
                hits = list(session.query(query.text, query.k))
                check_answer(system, hits, query)
                if hits:
                    raise InvariantViolation(_name(system), "answers an empty memory",
                                             f"{len(hits)} hits from an empty memory for {query.text!r}")
        half = len(turns) // 2  # two ingests: a memory fed in steps, as on the replay clock
        session.ingest(turns[:half])
        session.ingest(turns[half:], final=True)
        answers = []
        for query in queries:
            hits = list(session.query(query.text, query.k))
            check_answer(system, hits, query)
            answers.append(tuple(hits))
    return answers


def check_memory_system(system: MemorySystem, conversation: Conversation, queries: Sequence[ContractQuery],
                        **options: Unpack[ContractOptions]) -> list[tuple[SystemHit, ...]]:
    """Run ``system`` over ``conversation`` and check every promise of the contract; return its answers.

    A fresh memory is asked every query before any turn (no error, no hits), then fed the turns in
    two ingests and asked again (at most ``k`` hits, none twice).  With ``deterministic`` a second
    fresh memory fed the same turns must give the same answers (a system's own ids aside).

    Args:
        system: the memory system under test.
        conversation: the turns to ingest.
        queries: the questions, each with its ``k``.
        **options: ``ContractOptions``: the backend and embedder it is given, and whether it claims to be
            deterministic.

    Raises:
        InvariantViolation: a broken promise, naming the system and the query.
        MemorySystemError: the system failed (an empty memory that cannot answer fails here too).
    """
    answers = _answers(system, conversation, queries, options, empty_first=True)
    if options.get("deterministic", False):
        again = _answers(system, conversation, queries, options, empty_first=False)
        for query, first, second in zip(queries, answers, again):
            if [_comparable(h) for h in first] != [_comparable(h) for h in second]:
                raise InvariantViolation(_name(system), "deterministic",
                                         f"two fresh memories answer {query.text!r} k={query.k} differently: "
                                         f"{[h.text[:30] for h in first]} vs {[h.text[:30] for h in second]}")
    return answers


@st.composite
def contract_cases(draw: st.DrawFn, max_turns: int = 8) -> tuple[Conversation, list[ContractQuery]]:
    """``(conversation, queries)``: a small dated conversation of ``VOCABULARY`` words and 1-3 queries.

    One or two sessions of turns, each one to four words, seconds to days apart, two speakers.
    Queries are one or two vocabulary words (said in the conversation or not); ``k`` runs from 1 to
    a little more than the turns, so "at most k" is tested where the memory holds more than k.
    """
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=2).filter(lambda s: sum(s) <= max_turns))
    clock = _EPOCH + timedelta(seconds=draw(st.integers(0, 3 * 365 * 86400)))
    sessions = []
    for s, size in enumerate(sizes):
        sid = f"contract/S{s + 1}"
        turns = []
        for i in range(size):
            clock += timedelta(seconds=draw(st.integers(1, 3600) if i or not s else st.integers(3600, 9 * 86400)))
            role = ROLES[(s + i) % 2]
            text = " ".join(draw(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=4)))
            turns.append(Turn(f"D{s + 1}:{i + 1}", "contract", sid, role, text, clock,
                              ("Caroline", "Melanie")[ROLES.index(role)]))
        sessions.append(Session(sid, "contract", tuple(turns), started_at=turns[0].timestamp))
    words = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=2).map(" ".join)
    queries = draw(st.lists(st.builds(ContractQuery, words, st.integers(1, sum(sizes) + 2)), min_size=1, max_size=3))
    return Conversation("contract", tuple(sessions)), queries


def fixed_case() -> tuple[Conversation, list[ContractQuery]]:
    """The case every contract check runs first: six turns over two sessions.

    Every query but one matches more turns than its ``k`` (a system that ignores ``k`` shows it); one
    matches nothing.
    """
    lines = [("kayak Lisbon", 60), ("kayak pottery", 120), ("Lisbon kayak museum", 180),
             ("pottery violin", 7 * 86400), ("kayak violin Zoë", 7 * 86400 + 60), ("李雷 pottery kayak", 7 * 86400 + 90)]
    turns = [Turn(f"D{1 + (i > 2)}:{i % 3 + 1}", "contract", f"contract/S{1 + (i > 2)}", ROLES[i % 2], text,
                  _EPOCH + timedelta(seconds=at), ("Caroline", "Melanie")[i % 2]) for i, (text, at) in enumerate(lines)]
    sessions = tuple(Session(sid, "contract", tuple(t for t in turns if t.session_id == sid),
                             started_at=next(t.timestamp for t in turns if t.session_id == sid))
                     for sid in ("contract/S1", "contract/S2"))
    queries = [ContractQuery("kayak", 2), ContractQuery("pottery kayak", 1), ContractQuery("Lisbon violin", 3),
               ContractQuery("camping", 4), ContractQuery("kayak", 50)]
    return Conversation("contract", sessions), queries


def check_system_contract(system: MemorySystem, *, max_examples: int = 5, shrink: bool = True,
                          **options: Unpack[ContractOptions]) -> None:
    """Check the contract on ``fixed_case()``, then on ``max_examples`` drawn conversations (``contract_cases``).

    Each case opens one fresh memory (two with ``deterministic``), so a system that starts a process
    per memory costs ``1 + max_examples`` (or twice that) starts: keep it small (0: the fixed case
    alone) for such systems.  Examples are drawn the same way every run (``derandomize``), so a pass
    is reproducible; a failing drawn example is shrunk to a small one.

    Args:
        system: the memory system under test.
        max_examples: conversations drawn after the fixed case (0: none).
        shrink: shrink a failing example to a small one (each step runs the system again: a system that
            starts processes may prefer ``False``, the failing example as first found).
        **options: ``ContractOptions``: the backend and embedder it is given, and whether it claims to be
            deterministic (then checked on every case).

    Raises:
        InvariantViolation: the smallest failing example's broken promise.
        MemorySystemError: the system failed.
    """
    conversation, queries = fixed_case()
    check_memory_system(system, conversation, queries, **options)
    if max_examples < 1:
        return
    phases = tuple(Phase) if shrink else (Phase.explicit, Phase.generate)

    @settings(max_examples=max_examples, deadline=None, database=None, derandomize=True, phases=phases,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(contract_cases())
    def run(case: tuple[Conversation, list[ContractQuery]]) -> None:
        drawn, asked = case
        check_memory_system(system, drawn, asked, **options)

    run()
