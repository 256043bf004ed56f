"""The one conversation data model every importer maps onto.

Records are frozen dataclasses: importers build them once, and every later
stage reads them.  Ids are the source's own wherever the source has them, so a
user's probes can point at turns by the ids in their own export.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable, Iterator, Literal, Mapping, TypeGuard, overload

from lyra_lab._atomic import replaced
from lyra_lab._records import SCHEMA_KEY, Schema, record

Role = Literal["user", "assistant"]
ROLES: tuple[Role, ...] = ("user", "assistant")


def is_role(value: object) -> TypeGuard[Role]:
    """Whether ``value`` is one of the two roles a turn can have."""
    return value in ROLES


class CorpusFormatError(ValueError):
    """A file that cannot be imported: the message names the file, the place and the problem.

    Args:
        path: the file (or archive member) being read.
        where: the place inside it, as a JSON path (``$[3].mapping.abc``) or ``line 12``.
        problem: what is wrong, in words a user can act on.
    """

    def __init__(self, path: object, where: str, problem: str):
        self.path = str(path)
        self.where = where
        self.problem = problem
        super().__init__(f"{self.path}: {where}: {problem}" if where else f"{self.path}: {problem}")


@overload
def as_utc(value: datetime) -> datetime: ...
@overload
def as_utc(value: None) -> None: ...
@overload
def as_utc(value: datetime | None) -> datetime | None: ...


def as_utc(value: datetime | None) -> datetime | None:
    """Return ``value`` as an aware UTC datetime (naive values are taken as UTC)."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a conversation."""

    id: str
    conversation_id: str
    session_id: str
    role: Role
    text: str
    timestamp: datetime | None = None
    speaker: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"turn {self.id!r}: role must be one of {ROLES}, got {self.role!r}")
        if self.timestamp is not None and self.timestamp.tzinfo is None:
            raise ValueError(f"turn {self.id!r}: timestamp must be timezone-aware (UTC)")


@dataclass(frozen=True, slots=True)
class Session:
    """A run of turns that belong together (one chat, one LoCoMo session).

    ``gist`` carries a summary that came with the source (a Lyra DB summary).
    """

    id: str
    conversation_id: str
    turns: tuple[Turn, ...]
    title: str | None = None
    started_at: datetime | None = None
    gist: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True, slots=True)
class Conversation:
    """One scope of memory: a user's whole export, one LoCoMo sample, one LongMemEval instance."""

    id: str
    sessions: tuple[Session, ...]
    title: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def turns(self) -> Iterator[Turn]:
        """All turns, session by session, in source order."""
        for session in self.sessions:
            yield from session.turns


PROBE_LINE_KEYS = ("id", "question", "answer", "evidence", "conversation_id", "category", "asked_at", "abstention",
                   "adversarial")


def _probe_line(fields: dict[str, Any]) -> dict[str, Any]:
    """A probe's fields as one line of a probes file: defaults left out, ``meta`` keys as extra keys."""
    line = {k: fields[k] for k in PROBE_LINE_KEYS[:5]}
    line.update((k, fields[k]) for k in PROBE_LINE_KEYS[5:] if fields[k] is not None and fields[k] is not False)
    extra = {k: v for k, v in fields["meta"].items() if k not in line and k != SCHEMA_KEY}
    return {**extra, **line}


def _probe_fields(line: dict[str, Any]) -> dict[str, Any]:
    """The inverse of ``_probe_line``: keys that are not fields go back into ``meta``."""
    fields = {k: v for k, v in line.items() if k in PROBE_LINE_KEYS}
    return {**fields, "meta": {k: v for k, v in line.items() if k not in PROBE_LINE_KEYS}}


# A probe's record is one line of a probes file (lyra_lab.probes.save_probes writes them; load_probes reads them
# with line-numbered checks against the corpus).
@record(Schema("probe", 1, legacy=1, encode=_probe_line, decode=_probe_fields))
@dataclass(frozen=True, slots=True)
class Probe:
    """A question asked of the memory, with its gold answer and evidence turn ids."""

    id: str
    conversation_id: str
    question: str
    answer: str
    evidence: tuple[str, ...] = ()
    category: int | str | None = None
    asked_at: datetime | None = None
    adversarial: bool = False
    abstention: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True, slots=True)
class Corpus:
    """Conversations and the probes asked of them, with the source's provenance."""

    name: str
    conversations: tuple[Conversation, ...]
    probes: tuple[Probe, ...] = ()
    source: str | None = None
    sha256: str | None = None
    format: str | None = None

    def turns(self) -> Iterator[Turn]:
        for conversation in self.conversations:
            yield from conversation.turns()

    def conversation(self, conversation_id: str) -> Conversation:
        for conversation in self.conversations:
            if conversation.id == conversation_id:
                return conversation
        raise KeyError(f"no conversation {conversation_id!r} in corpus {self.name!r}")

    def probes_for(self, conversation_id: str) -> tuple[Probe, ...]:
        return tuple(p for p in self.probes if p.conversation_id == conversation_id)

    def with_probes(self, probes: tuple[Probe, ...] | list[Probe]) -> "Corpus":
        """A copy of this corpus with ``probes`` instead of its own."""
        return Corpus(self.name, self.conversations, tuple(probes), self.source, self.sha256, self.format)

    def save(self, path: "str | os.PathLike[str]") -> "Path":
        """Write the corpus in lyra-lab's own JSONL format; ``lyra_lab.load`` reads it back unchanged."""
        return save(self, path)

    def stats(self) -> dict[str, Any]:
        """Counts a user checks first: conversations, sessions, turns, probes, roles, date span."""
        turns = list(self.turns())
        stamps = [t.timestamp for t in turns if t.timestamp is not None]
        roles = Counter(t.role for t in turns)
        parts = Counter(str(t.meta.get("part")) for t in turns if t.meta.get("part"))
        return {
            "name": self.name,
            "format": self.format,
            "conversations": len(self.conversations),
            "sessions": sum(len(c.sessions) for c in self.conversations),
            "turns": len(turns),
            "probes": len(self.probes),
            "user_turns": roles.get("user", 0),
            "assistant_turns": roles.get("assistant", 0),
            # turns that are not messages: an attachment's text or a canvas document, a turn each
            "part_turns": dict(sorted(parts.items())),
            "first": min(stamps).isoformat() if stamps else None,
            "last": max(stamps).isoformat() if stamps else None,
            "sha256": self.sha256,
        }


# The native format's writer lives beside ``Corpus.save`` and its reader in ``_native`` (which builds
# these records), so neither module has to import the other's.
MAGIC = "lyra_lab_corpus"
VERSION = 1


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def dump_lines(corpus: Corpus) -> Iterable[str]:
    """The corpus as JSON lines (no trailing newlines)."""
    header = {MAGIC: VERSION, "name": corpus.name, "source": corpus.source,
              "sha256": corpus.sha256, "format": corpus.format}
    yield json.dumps(header, ensure_ascii=False)
    for conv in corpus.conversations:
        yield json.dumps({"type": "conversation", "id": conv.id, "title": conv.title,
                          "meta": dict(conv.meta)}, ensure_ascii=False)
        for s in conv.sessions:
            yield json.dumps({"type": "session", "id": s.id, "conversation_id": s.conversation_id,
                              "title": s.title, "started_at": _iso(s.started_at), "gist": s.gist,
                              "meta": dict(s.meta)}, ensure_ascii=False)
            for t in s.turns:
                yield json.dumps({"type": "turn", "id": t.id, "conversation_id": t.conversation_id,
                                  "session_id": t.session_id, "role": t.role, "speaker": t.speaker,
                                  "text": t.text, "timestamp": _iso(t.timestamp),
                                  "meta": dict(t.meta)}, ensure_ascii=False)
    for p in corpus.probes:
        yield json.dumps({"type": "probe", "id": p.id, "conversation_id": p.conversation_id,
                          "question": p.question, "answer": p.answer, "evidence": list(p.evidence),
                          "category": p.category, "asked_at": _iso(p.asked_at),
                          "adversarial": p.adversarial, "abstention": p.abstention,
                          "meta": dict(p.meta)}, ensure_ascii=False)


def save(corpus: Corpus, path: str | os.PathLike[str]) -> Path:
    """Write ``corpus`` to ``path`` (atomically: a temp file renamed into place)."""
    with replaced(path) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        for line in dump_lines(corpus):
            fh.write(line + "\n")
    return Path(path)
