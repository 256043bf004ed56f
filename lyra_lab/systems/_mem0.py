"""mem0 (PyPI ``mem0ai``) as a memory system, offline: lyra-lab's backend, embedder and a local store.

Each session gets a temp folder, an ``OpenAIEndpoint`` on 127.0.0.1 and a
``mem0.Memory`` configured through mem0's own config keys:

- ``llm``: provider ``openai`` at the endpoint, which forwards to the cell's
  backend (so every call is metered, cached and priced like lyra-lab's own);
- ``embedder``: provider ``openai`` at the endpoint, which embeds with the cell's
  embedder; searches go out as model ``…:query`` so query-aware embedders (e5)
  embed questions as queries, as lyra-lab's dense recaller does;
- ``vector_store``: qdrant in local mode (``path`` in the temp folder), and the
  history database in the same folder: nothing outlives the session;
- telemetry off (``MEM0_TELEMETRY=False`` before mem0 is imported) and its
  config folder (``MEM0_DIR``) under lyra-lab's cache, not the home folder.

``infer=False`` stores each turn as it is (one ``add`` per turn, its turn id,
session, speaker and time as metadata): hits are turns verbatim.  The turns of
one ingest are embedded first in mem0's batches of 100 (``_mem0_embedder``), not
one request a turn.  ``infer=True``
lets mem0's LLM extract facts from ``batch`` turns at a time: hits are facts
that cover those turns.  When the model cannot produce the JSON mem0 asks for,
mem0 stores nothing for that batch; the ingest report counts it (``bad_outputs``: a
reply that was not JSON, or JSON mem0 could not use; ``failed_calls``: the call
itself failed), the run goes on.

mem0's optional extras are not used: spaCy (entity boosts, lemmas for BM25) and
fastembed (BM25 sparse vectors) load models from a hub at run time, so search is
mem0's semantic search alone.  mem0 logs a warning each time it misses one ("Failed to
load spaCy lemma model … pip install mem0ai[nlp]", "fastembed not installed - BM25
keyword search disabled"): advice against a choice lyra-lab made, so ``import_mem0``
filters exactly those records from mem0's loggers, and a run says once, in its log,
which extras are off and why (``EXTRAS_OFF``, a ``system_notice`` event).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime
from types import ModuleType
from typing import Mapping, Protocol, Sequence, TypedDict

from lyra_lab._params import param
from lyra_lab.backends import Backend, Embedder, cache_dir
from lyra_lab.corpus import Turn
from lyra_lab.systems._base import BaseSession, BaseSystem
from lyra_lab.systems._endpoint import OpenAIEndpoint
from lyra_lab.systems._mem0_embedder import Ahead, Mem0Embedder, adapt, embed_ahead
from lyra_lab.systems._types import SYSTEMS, Declared, IngestReport, MemorySystemError, Needs, SystemHit

EMBED_MODEL = "lyra-lab-embedder"

EXTRAS_OFF = ("mem0's optional extras are off: spaCy (mem0ai[nlp]: entity boosts, lemmas for BM25) and fastembed "
              "(mem0ai[extras]: BM25 sparse vectors) download models at run time, and lyra-lab runs offline; mem0 "
              "searches by its embeddings alone, and its warnings about the missing extras are filtered")
# mem0's logger -> the start of the messages about an extra lyra-lab leaves out on purpose
_EXTRA_WARNINGS = {
    "mem0.utils.spacy_models": ("Failed to load spaCy lemma model: spaCy is not installed",
                                "Failed to load spaCy full model: spaCy is not installed"),
    "mem0.vector_stores.qdrant": ("fastembed not installed - BM25 keyword search disabled",),
}


class _MissingExtraFilter(logging.Filter):
    """Drops a mem0 record that says an optional extra lyra-lab leaves out is missing; lets the rest through."""

    def __init__(self, starts: tuple[str, ...]):
        super().__init__()
        self.starts = starts

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self.starts)


def quiet_missing_extras() -> None:
    """Filter mem0's warnings about the extras lyra-lab leaves out (once per logger; other records pass)."""
    for name, starts in _EXTRA_WARNINGS.items():
        logger = logging.getLogger(name)
        if not any(isinstance(f, _MissingExtraFilter) for f in logger.filters):
            logger.addFilter(_MissingExtraFilter(starts))


class Mem0Metadata(TypedDict, total=False):
    """The metadata lyra-lab gives each ``add`` (and mem0 hands back with each item)."""

    turn_ids: list[str]
    session_id: str
    speaker: str
    created_at: str
    until: str


class Mem0Item(TypedDict, total=False):
    """One memory as mem0's ``add``, ``search`` and ``get_all`` answer it (mem0ai 2.x)."""

    id: str
    memory: str
    score: float | None
    created_at: str | None
    metadata: Mem0Metadata | None


class Mem0Results(TypedDict, total=False):
    """mem0's answer to ``add``, ``search`` and ``get_all``: the items under ``results``."""

    results: list[Mem0Item]


class _Closable(Protocol):
    def close(self) -> None: ...


class _VectorStore(Protocol):
    client: _Closable  # the local qdrant client (the store lyra-lab configures)


class Mem0Memory(Protocol):
    """The part of ``mem0.Memory`` a session uses (mem0 ships no type hints; this is what 2.x offers)."""

    vector_store: _VectorStore
    embedding_model: Mem0Embedder

    def add(self, messages: list[dict[str, str]], *, user_id: str, metadata: Mem0Metadata,
            infer: bool) -> Mem0Results:
        """Store ``messages`` for ``user_id`` (``infer``: extract facts with mem0's LLM)."""
        ...

    def search(self, query: str, *, top_k: int, filters: Mapping[str, str], threshold: float) -> Mem0Results:
        """The ``top_k`` items best matching ``query`` among those ``filters`` select."""
        ...

    def get_all(self, *, filters: Mapping[str, str], top_k: int) -> Mem0Results:
        """At most ``top_k`` items ``filters`` select."""
        ...

    def close(self) -> None:
        """Close its history database."""
        ...


def import_mem0() -> ModuleType:
    """``mem0``, imported with its telemetry off and its config folder under lyra-lab's cache.

    Raises:
        RuntimeError: OPENROUTER_API_KEY is set (mem0 then sends its LLM calls to OpenRouter).
    """
    if os.environ.get("OPENROUTER_API_KEY"):
        raise RuntimeError("OPENROUTER_API_KEY is set: mem0 would send its LLM calls to OpenRouter instead of "
                           "lyra-lab's backend; unset it to run mem0 here")
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("MEM0_DIR", str(cache_dir() / "mem0"))
    quiet_missing_extras()
    import mem0
    import mem0.memory.main as main
    import mem0.memory.telemetry as telemetry

    if telemetry.MEM0_TELEMETRY or main.MEM0_TELEMETRY:  # imported earlier, with telemetry on: turn it off
        telemetry.MEM0_TELEMETRY = main.MEM0_TELEMETRY = False
    return mem0


@SYSTEMS.register("mem0")
@dataclass(frozen=True)
class Mem0System(BaseSystem):
    """mem0's ``Memory``: raw turns (``infer=False``) or LLM-extracted facts (``infer=True``)."""

    infer: bool = param(False, doc="let mem0's LLM extract facts (true) or store each turn as it is (false).")
    batch: int = param(2, ge=1, doc="turns per mem0 add() call when infer is true (one LLM call each).")
    threshold: float = param(0.0, ge=0, le=1, doc="mem0's search threshold (0: always k results when there are).")
    max_tokens: int = param(512, ge=16, doc="the most tokens of one fact-extraction reply.")

    def label(self) -> str:
        return f"mem0:{'infer' if self.infer else 'raw'}"

    def needs(self) -> Needs:
        return Needs(backend=self.infer, embedder=True)

    def notice(self) -> str:
        """What a run's log says once about this system: the mem0 extras that are off, and why."""
        return EXTRAS_OFF

    def declare(self) -> Declared:
        """With ``infer``, one LLM call per ``add()`` of ``batch`` turns (mem0 2.2's single extraction call).

        Its prompt adds mem0's extraction instructions (7,606 o200k tokens in mem0ai 2.2.1) and up to
        10 memories it already holds and the last messages (up to about 1,400 more) to the turns' text.
        """
        if not self.infer:
            return Declared(capabilities=("system:mem0",))
        per_add = 1 / self.batch
        return Declared(calls_per_turn=(per_add, per_add), prompt_overhead_tokens=(7606, 9000),
                        max_tokens=self.max_tokens, capabilities=("system:mem0",))

    def open(self, conversation_id: str, backend: Backend | None, embedder: Embedder | None) -> "Mem0Session":
        if embedder is None:
            raise MemorySystemError(self.label(), "open", "mem0 needs an embedder (the cell gave none)")
        if self.infer and backend is None:
            raise MemorySystemError(self.label(), "open", "mem0 with infer=true needs a backend (the cell gave none)")
        return Mem0Session(self, conversation_id, backend, embedder)


class Mem0Session(BaseSession):
    """One ``mem0.Memory`` with its own endpoint and folder, scoped to one conversation (``user_id``)."""

    def __init__(self, system: Mem0System, conversation_id: str, backend: Backend | None, embedder: Embedder):
        super().__init__(system.label())
        self.system = system
        self.conversation_id = conversation_id
        self.workdir = tempfile.mkdtemp(prefix="lyra-mem0-")
        self.endpoint = OpenAIEndpoint(backend if system.infer else None, embedder)
        self.memory: Mem0Memory | None = None
        self.stored = 0  # items mem0 said it stored (the most get_all may have to list)
        self.ahead: Ahead = {}  # a raw ingest's passages, embedded in batches before its adds
        try:
            self.guard("open", lambda: self._start(embedder))
        except BaseException:
            self._close()
            self.closed = True
            raise

    def _start(self, embedder: Embedder) -> None:
        import_mem0()
        from mem0 import Memory

        self.endpoint.start()
        dim = int(embedder.dim)
        config = {
            "llm": {"provider": "openai", "config": {"model": "lyra-lab", "api_key": "unused-by-lyra-lab",
                                                     "openai_base_url": self.endpoint.base_url,
                                                     "max_tokens": self.system.max_tokens}},
            "embedder": {"provider": "openai", "config": {"model": EMBED_MODEL, "api_key": "unused-by-lyra-lab",
                                                          "openai_base_url": self.endpoint.base_url,
                                                          "embedding_dims": dim}},
            "vector_store": {"provider": "qdrant", "config": {"collection_name": "lyra", "embedding_model_dims": dim,
                                                              "path": os.path.join(self.workdir, "qdrant")}},
            "history_db_path": os.path.join(self.workdir, "history.db"),
        }
        memory: Mem0Memory = Memory.from_config(config)
        self.memory = memory
        adapt(memory.embedding_model, self.ahead)

    def _ingest(self, turns: list[Turn], final: bool) -> IngestReport:
        report = IngestReport()
        size = self.system.batch if self.system.infer else 1
        if not self.system.infer:  # every turn is stored as it is: embed them in batches, not one a request
            embed_ahead(self._memory().embedding_model, self.ahead, [_content(t) for t in turns])
        try:
            for i in range(0, len(turns), size):
                report = report + self._add(turns[i:i + size])
        finally:
            self.ahead.clear()
        self.stored += report.items
        return report

    def _add(self, batch: list[Turn]) -> IngestReport:
        """One ``mem0.Memory.add`` of ``batch``, and what it cost and produced.

        With ``infer``, an ``add`` that raises is counted, not raised: a failed call when the backend
        failed (or mem0 failed before asking it), a bad output when the LLM answered and mem0 could not
        use the reply (JSON of another shape: mem0 raises on it).  Either way the exception is a note.
        """
        messages = [{"role": str(t.role), "content": _content(t)} for t in batch]
        metadata: Mem0Metadata = {"turn_ids": [t.id for t in batch], "session_id": batch[0].session_id,
                    "speaker": batch[0].speaker or str(batch[0].role)}
        if batch[0].timestamp is not None:
            metadata["created_at"] = batch[0].timestamp.isoformat()
        if batch[-1].timestamp not in (None, batch[0].timestamp):
            metadata["until"] = batch[-1].timestamp.isoformat()
        stored, failed, bad, note = 0, 0, 0, ""
        try:
            result = self._memory().add(messages, user_id=self.conversation_id, metadata=metadata,
                                        infer=self.system.infer)
            stored = len(result.get("results") or [])
        except Exception as exc:  # noqa: BLE001 - mem0 raises when its LLM call fails or its reply is unusable
            if not self.system.infer:
                raise
            note = f"{type(exc).__name__}: {exc}"[:300]
        tally = self.endpoint.tally()
        if note:  # a backend failure is counted by the endpoint (and raised again by mem0): once
            answered = tally.usage.calls > 0 and not tally.failed_calls
            bad = int(answered and not tally.bad_outputs)  # a reply that was not JSON is counted already
            failed = int(not answered and not tally.failed_calls)
        return IngestReport(items=stored, usage=tally.usage, failed_calls=tally.failed_calls + failed,
                            refused_calls=tally.refused_calls,
                            bad_outputs=tally.bad_outputs + bad, embed_calls=tally.embed_calls,
                            notes=tuple(dict.fromkeys([*tally.notes, *([note] if note else [])]))[:5])

    def _query(self, question: str, k: int, now: datetime | None) -> Sequence[SystemHit]:
        answer = self._memory().search(question, top_k=k, filters={"user_id": self.conversation_id},
                                       threshold=self.system.threshold)
        self.endpoint.tally()  # query embeddings are query cost, not ingest cost
        return [self._hit(item) for item in answer.get("results") or []]

    def _contents(self) -> Sequence[SystemHit]:
        limit = self.stored + 100
        while True:  # get_all lists at most top_k: ask for more than mem0 said it stored, and more again if full
            items = self._memory().get_all(filters={"user_id": self.conversation_id}, top_k=limit).get("results") or []
            if len(items) < limit:
                return [self._hit(item) for item in items]
            limit *= 2

    def _memory(self) -> Mem0Memory:
        if self.memory is None:  # the guard's "session is closed" comes first; this is a broken start
            raise RuntimeError("mem0 is not running in this session")
        return self.memory

    def _hit(self, item: Mem0Item) -> SystemHit:
        meta: Mem0Metadata = item.get("metadata") or {}
        ids = meta.get("turn_ids") or []
        return SystemHit(text=str(item.get("memory", "")), score=float(item.get("score") or 0.0),
                         turn_ids=tuple(str(t) for t in ids), when=_iso(item.get("created_at")),
                         kind="fact" if self.system.infer else "turn", id=str(item.get("id") or ""),
                         until=_iso(meta.get("until")))

    def _close(self) -> None:
        try:
            if self.memory is not None:
                self.memory.close()  # its history database
                self.memory.vector_store.client.close()  # the local qdrant (we configured qdrant)
        finally:
            self.memory = None
            self.endpoint.stop()
            shutil.rmtree(self.workdir, ignore_errors=True)


def _content(turn: Turn) -> str:
    """The message content mem0 stores for ``turn``: its speaker (or role) and its text."""
    return f"{turn.speaker or turn.role}: {turn.text}"


def _iso(value: object) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) and value else None
    except ValueError:
        return None
