"""The contract of a memory system lyra-lab does not build: open, ingest turns, query, close.

A memory *system* (mem0, an MCP memory server, a team's HTTP service, or one of
lyra-lab's own pipelines served) is a frozen dataclass of its parameters,
registered by name in ``SYSTEMS``.  ``open`` gives a fresh *session*: one
conversation's memory, fed turns in replay order and asked questions on the
replay clock, and asked for everything it holds (``contents``) where the system
can list it.  What a session hands back is typed: ``SystemHit`` per result and
``IngestReport`` per ingest (calls, tokens, dollars, failures, seconds), which
add up with ``+``.  Every failure of the system itself is one ``MemorySystemError``
naming the system and the call.
"""

from __future__ import annotations

from dataclasses import Field, dataclass, field
from datetime import datetime
from types import TracebackType
from typing import Any, ClassVar, Protocol, Sequence, runtime_checkable

from lyra_lab._registry import Registry
from lyra_lab.backends import Backend, Embedder, Recurs, Usage
from lyra_lab.corpus import Turn
from lyra_lab.memory import EntryKind

#: Memory systems by registered name (``mem0``, ``mcp``, ``http``, ``pipeline``).
SYSTEMS: Registry["MemorySystem"] = Registry("system")

#: What ``SystemHit.kind`` may be: the memory entry kinds (``turn`` and ``chunk`` are verbatim).
HIT_KINDS: tuple[str, ...] = tuple(k.value for k in EntryKind)
#: The most distinct failure messages an ``IngestReport`` keeps (the count keeps counting).
MAX_NOTES = 5


class MemorySystemError(RuntimeError):
    """A memory system that crashed, hung past its timeout or answered garbage.

    The message is one line: ``memory system 'mcp': query failed: <reason>``.

    Attributes:
        system: the system's label.
        call: what lyra-lab asked of it (``open``, ``ingest``, ``query``, ``contents``, ``close``).
        reason: what went wrong, in one line.
        recurs: whether it would fail the same way again, when a backend call of the system's failed
            (``BackendError.recurs``, passed on; None: not known from a backend, or it may pass).
    """

    def __init__(self, system: str, call: str, reason: str, recurs: Recurs | None = None):
        self.system = system
        self.call = call
        self.recurs: Recurs | None = recurs
        self.reason = " ".join(str(reason).split())[:500] or "no reason given"
        super().__init__(f"memory system {system!r}: {call} failed: {self.reason}")


@dataclass(frozen=True, slots=True)
class SystemHit:
    """One result of a system's query, best first.

    Attributes:
        text: what the system returned (what a chat model would be given).
        score: the system's own score (higher is better), or a rank-derived one.
        turn_ids: the source turns it came from, when the system keeps that metadata; empty when
            it cannot be traced (then evidence recall does not apply, answer-in-context still does).
        when: the time of what it remembers (the turn's timestamp), for the dated context line.
        until: the end of that time when the item spans several turns (None: ``when`` alone).
        kind: a memory entry kind (``HIT_KINDS``): ``turn`` when ``text`` is one turn verbatim
            (counts as verbatim evidence), ``fact`` for an extracted or condensed item (it never does).
        id: the system's own id of the item, when it has one.
    """

    text: str
    score: float = 0.0
    turn_ids: tuple[str, ...] = ()
    when: datetime | None = None
    kind: str = EntryKind.FACT.value
    id: str = ""
    until: datetime | None = None

    def __post_init__(self) -> None:
        if self.kind not in HIT_KINDS:
            raise ValueError(f"hit kind {self.kind!r}; allowed: {', '.join(HIT_KINDS)}")
        if not isinstance(self.turn_ids, tuple):
            object.__setattr__(self, "turn_ids", tuple(self.turn_ids))


@dataclass(frozen=True)
class IngestReport:
    """What ingesting turns cost and produced; reports add up with ``+``.

    Attributes:
        turns: turns handed to the system.
        items: items the system says it stored (memories, facts, observations, entries).
        usage: the LLM calls lyra-lab metered for it (tokens, dollars, calls, cached calls).
        failed_calls: calls that failed (an LLM call, a tool call); the system went on without them.
        refused_calls: of those, the calls refused outright (a tool error, an LLM request the provider
            refused: HTTP 400, a prompt over the model's context), which would fail the same way again.
        bad_outputs: LLM replies that were not what the system asked for (JSON it could not read).
        embed_calls: embedding requests served to it.
        seconds: wall time of the ingest calls.
        notes: up to ``MAX_NOTES`` distinct failure messages, for the run log.
    """

    turns: int = 0
    items: int = 0
    usage: Usage = Usage()
    failed_calls: int = 0
    bad_outputs: int = 0
    embed_calls: int = 0
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default=())
    refused_calls: int = 0

    def __add__(self, other: object) -> "IngestReport":
        """The two reports summed field by field; their notes merged (distinct, at most ``MAX_NOTES``)."""
        if not isinstance(other, IngestReport):
            return NotImplemented
        notes = tuple(dict.fromkeys((*self.notes, *other.notes)))[:MAX_NOTES]
        return IngestReport(self.turns + other.turns, self.items + other.items, self.usage + other.usage,
                            self.failed_calls + other.failed_calls, self.bad_outputs + other.bad_outputs,
                            self.embed_calls + other.embed_calls, self.seconds + other.seconds, notes,
                            self.refused_calls + other.refused_calls)

    def __radd__(self, other: object) -> "IngestReport":
        """``0 + report`` is the report, so ``sum(reports)`` adds up."""
        if other == 0:  # sum(reports)
            return self
        return self.__add__(other)


@dataclass(frozen=True)
class Needs:
    """What a system needs from the cell, so nothing it does not use is built or started.

    Attributes:
        backend: it makes LLM calls (they go to the cell's backend).
        embedder: it embeds text (with the cell's embedder).
    """

    backend: bool = False
    embedder: bool = False


@dataclass(frozen=True)
class Declared:
    """What a system declares about where a conversation's text goes and what it asks of models.

    ``lyra-lab plan`` forecasts a system's cells from this and never runs the system; consent asks
    before text reaches any of these places.

    Attributes:
        urls: services that receive the text (an ``http`` system's URL).
        processes: command lines it starts that receive the text (an MCP server started by a command).
        backends: backend presets a process it starts builds (a ``served`` pipeline that summarizes).
        embedders: embedder presets a process it starts builds.
        calls_per_turn: LLM calls to the cell's backend per ingested turn, low and high.
        calls_per_query: LLM calls to the cell's backend per query, low and high.
        prompt_overhead_tokens: prompt tokens each such call adds to the text it carries, low and high.
        max_tokens: the completion cap of those calls.
        in_process: it runs in lyra-lab's process and sends nothing anywhere but the cell's backend and
            embedder (lyra-lab's own pipeline): the plan's dry run may run it itself, against stand-in models.
        capabilities: what it runs on that an extra installs (names in ``lyra_lab._extras.CAPABILITIES``,
            ``"system:mem0"``): checked before a run, so a missing extra is one line naming it.
    """

    urls: tuple[str, ...] = ()
    processes: tuple[str, ...] = ()
    backends: tuple[str, ...] = ()
    embedders: tuple[str, ...] = ()
    calls_per_turn: tuple[float, float] = (0.0, 0.0)
    calls_per_query: tuple[float, float] = (0.0, 0.0)
    prompt_overhead_tokens: tuple[int, int] = (0, 0)
    max_tokens: int = 0
    in_process: bool = False
    capabilities: tuple[str, ...] = ()


@runtime_checkable
class MemorySession(Protocol):
    """One fresh memory of one conversation; also a context manager that closes it."""

    def ingest(self, turns: Sequence[Turn], *, final: bool = False) -> IngestReport:
        """Store ``turns`` (in replay order); ``final``: no turn follows them (the conversation ended)."""
        ...

    def query(self, question: str, k: int, *, now: datetime | None = None) -> Sequence[SystemHit]:
        """At most ``k`` results for ``question``, best first, as of ``now`` on the replay clock."""
        ...

    def contents(self) -> Sequence[SystemHit] | None:
        """Everything the memory holds now (in no particular order), or None when the system cannot list it.

        What the measures read the memory's facts from (is the answer anywhere in memory; how many
        entries cover the evidence): a fourth method, because nothing else can tell them.
        """
        ...

    def close(self) -> None:
        """Release everything the session holds; every process it started is gone after it."""
        ...

    def __enter__(self) -> "MemorySession":
        """The session itself."""
        ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        """Close the session, also when the block raised."""
        ...


@runtime_checkable
class MemorySystem(Protocol):
    """A registered, frozen spec of a memory system that opens sessions (a dataclass, as every strategy is)."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    def label(self) -> str:
        """A short name for result rows (``mem0:raw``, ``mcp:server-memory``)."""
        ...

    def needs(self) -> Needs:
        """Whether sessions use the cell's backend and embedder."""
        ...

    def traces(self) -> bool:
        """Whether its hits name their source turns (``SystemHit.turn_ids``): turn-level retrieval applies."""
        ...

    def declare(self) -> "Declared":
        """Where its text goes and what it asks of models (``Declared``): what a plan forecasts it from."""
        ...

    def notice(self) -> str:
        """What a run's log says once about it (choices lyra-lab made for it); empty: nothing."""
        ...

    def open(self, conversation_id: str, backend: Backend | None, embedder: Embedder | None) -> MemorySession:
        """A fresh memory for ``conversation_id``.

        Raises:
            MemorySystemError: the system could not be started.
        """
        ...
