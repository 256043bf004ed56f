"""lyra-lab's memory protocol, version 1: JSON bodies for open, ingest, query, contents and close.

Every request is a ``POST`` of a JSON object carrying ``"protocol": 1``; every
answer is a JSON object (``docs/memory-systems.md`` is the reference):

- ``/open``   ``{conversation_id}`` → ``{protocol, session}``: a fresh, empty memory.
- ``/ingest`` ``{session, turns: [{id, session_id, role, speaker, text, timestamp}], final}``
  → ``{stored?, usage?, failed_calls?, bad_outputs?, embed_calls?, notes?}``.
- ``/query``  ``{session, query, k, now}`` → ``{hits: [{text, score?, turn_ids?, when?, until?, kind?, id?}]}``.
- ``/contents`` ``{session}`` → ``{hits: [...]}``: everything the memory holds (optional: a 404 or
  405 means the service cannot list it; the measures that need it are then not computed).
- ``/close``  ``{session}`` → ``{}`` (optional: a 404 means the service has nothing to close).

This module turns records into JSON and back, and says in one line what is
wrong with an answer that does not follow the protocol (``ProtocolError``).
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Mapping, TypedDict

from lyra_lab.backends import Usage
from lyra_lab.corpus import Role, Turn
from lyra_lab.memory import EntryKind
from lyra_lab.systems._types import HIT_KINDS, MAX_NOTES, IngestReport, SystemHit

PROTOCOL = 1
CALLS = ("open", "ingest", "query", "contents", "close")


class TurnJson(TypedDict):
    """One turn as ``/ingest`` sends it (``timestamp``: ISO 8601 or null)."""

    id: str
    session_id: str
    role: str
    speaker: str
    text: str
    timestamp: str | None


class HitJson(TypedDict):
    """One result as ``/query`` and ``/contents`` answer it (times: ISO 8601 or null)."""

    text: str
    score: float
    turn_ids: list[str]
    when: str | None
    kind: str
    id: str
    until: str | None


class HitsJson(TypedDict):
    """The answer of ``/query`` and ``/contents``."""

    hits: list[HitJson]


class UsageJson(TypedDict):
    """The LLM calls an ingest made, as the protocol reports them."""

    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    calls: int
    cached_calls: int


class ReportJson(TypedDict):
    """The answer of ``/ingest``: what storing the turns produced and cost."""

    stored: int
    usage: UsageJson
    failed_calls: int
    bad_outputs: int
    embed_calls: int
    notes: list[str]


class ProtocolError(ValueError):
    """A message that does not follow the protocol (the one line says what and where)."""


def turn_json(turn: Turn) -> TurnJson:
    """A turn as the protocol sends it (the speaker defaults to the role)."""
    return {"id": turn.id, "session_id": turn.session_id, "role": str(turn.role),
            "speaker": turn.speaker or str(turn.role), "text": turn.text,
            "timestamp": turn.timestamp.isoformat() if turn.timestamp else None}


def turn_from_json(data: object, conversation_id: str, where: str) -> Turn:
    """The turn a request carries, of ``conversation_id``.

    Args:
        data: the parsed JSON of one turn (``TurnJson``).
        conversation_id: the conversation of the session it is sent to.
        where: where it is in the request, for the error line (``request.turns[3]``).

    Raises:
        ProtocolError: no string ``text`` or ``id``, a timestamp that is not ISO 8601, or a turn the data
            model refuses (a timestamp without its time zone).
    """
    obj = _object(data, where)
    text, turn_id = _str(obj, "text", where), _str(obj, "id", where)
    role: Role = "assistant" if obj.get("role") == "assistant" else "user"
    speaker = obj.get("speaker")
    try:
        return Turn(id=turn_id, conversation_id=conversation_id, session_id=str(obj.get("session_id") or ""),
                    role=role, text=text, timestamp=parse_when(obj.get("timestamp"), f"{where}.timestamp"),
                    speaker=str(speaker) if speaker else None)
    except ProtocolError:
        raise
    except ValueError as exc:  # a turn the data model refuses (a time without its zone)
        raise ProtocolError(f"{where}: {exc}") from None


def hit_json(hit: SystemHit) -> HitJson:
    """A hit as the protocol answers it."""
    return {"text": hit.text, "score": hit.score, "turn_ids": list(hit.turn_ids),
            "when": hit.when.isoformat() if hit.when else None, "kind": hit.kind, "id": hit.id,
            "until": hit.until.isoformat() if hit.until else None}


def hit_from_json(data: object, where: str) -> SystemHit:
    """The hit an answer carries (``where``: its place, for the error line).

    Raises:
        ProtocolError: no string ``text``, a score that is not a finite number, turn ids that are not
            a list of strings, a kind outside ``HIT_KINDS``, or a time that is not ISO 8601.
    """
    obj = _object(data, where)
    text = _str(obj, "text", where)
    score = obj.get("score", 0.0)
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        raise ProtocolError(f"{where}.score: expected a number, got {score!r}")
    ids = obj.get("turn_ids") or []
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ProtocolError(f"{where}.turn_ids: expected a list of strings, got {ids!r}")
    kind = obj.get("kind") or EntryKind.FACT.value
    if not isinstance(kind, str) or kind not in HIT_KINDS:
        raise ProtocolError(f"{where}.kind: {kind!r}; allowed: {', '.join(HIT_KINDS)}")
    return SystemHit(text=text, score=float(score), turn_ids=tuple(ids), when=parse_when(obj.get("when"), f"{where}.when"),
                     kind=kind, id=str(obj.get("id") or ""), until=parse_when(obj.get("until"), f"{where}.until"))


def hits_from_json(data: object) -> list[SystemHit]:
    """The hits of a ``/query`` or ``/contents`` answer, in order.

    Raises:
        ProtocolError: the answer has no list ``hits``, or one of them is not a hit.
    """
    hits = _object(data, "answer").get("hits")
    if not isinstance(hits, list):
        raise ProtocolError(f"answer.hits: expected a list, got {type(hits).__name__}")
    return [hit_from_json(h, f"hits[{i}]") for i, h in enumerate(hits)]


def report_json(report: IngestReport) -> ReportJson:
    """An ingest report as the protocol answers it."""
    usage = report.usage
    return {"stored": report.items,
            "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                      "cost_usd": usage.cost_usd, "calls": usage.calls, "cached_calls": usage.cached_calls},
            "failed_calls": report.failed_calls, "bad_outputs": report.bad_outputs,
            "embed_calls": report.embed_calls, "notes": list(report.notes)}


def report_from_json(data: object) -> IngestReport:
    """The ingest report of an ``/ingest`` answer (every field optional, counts default to 0).

    Raises:
        ProtocolError: a count that is not an integer >= 0, a cost that is not a finite number, or
            ``usage``/``notes`` of the wrong type.
    """
    obj = _object(data, "answer")
    usage_obj = _object(obj.get("usage") or {}, "answer.usage")
    counts = {name: _count(obj, name, "answer") for name in ("stored", "failed_calls", "bad_outputs", "embed_calls")}
    usage = Usage(prompt_tokens=_count(usage_obj, "prompt_tokens", "answer.usage"),
                  completion_tokens=_count(usage_obj, "completion_tokens", "answer.usage"),
                  cost_usd=float(_number(usage_obj, "cost_usd")), calls=_count(usage_obj, "calls", "answer.usage"),
                  cached_calls=_count(usage_obj, "cached_calls", "answer.usage"))
    notes = obj.get("notes") or []
    if not isinstance(notes, list):
        raise ProtocolError(f"answer.notes: expected a list, got {type(notes).__name__}")
    return IngestReport(items=counts["stored"], usage=usage, failed_calls=counts["failed_calls"],
                        bad_outputs=counts["bad_outputs"], embed_calls=counts["embed_calls"],
                        notes=tuple(str(n)[:300] for n in notes[:MAX_NOTES]))


def check_protocol(obj: Mapping[str, object], where: str) -> None:
    """Raise ``ProtocolError`` unless ``obj`` says ``"protocol": 1``."""
    version = obj.get("protocol")
    if version != PROTOCOL:
        raise ProtocolError(f"{where}.protocol: {version!r}; this lyra-lab speaks protocol {PROTOCOL}")


def _object(data: object, where: str) -> Mapping[str, object]:
    if not isinstance(data, Mapping):
        raise ProtocolError(f"{where}: expected a JSON object, got {type(data).__name__}")
    return data


def _str(obj: Mapping[str, object], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise ProtocolError(f"{where}.{key}: expected a string, got {value!r}"[:300])
    return value


def _count(obj: Mapping[str, object], key: str, where: str) -> int:
    value = obj.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ProtocolError(f"{where}.{key}: expected a count (an integer >= 0), got {value!r}")
    return value


def _number(obj: Mapping[str, object], key: str) -> float:
    value = obj.get(key, 0.0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ProtocolError(f"answer.usage.{key}: expected a number, got {value!r}")
    return value


def parse_when(value: object, where: str) -> datetime | None:
    """An ISO 8601 time, or None for null.

    Raises:
        ProtocolError: anything else (named by ``where``).
    """
    if value is None:
        return None
    try:
        if not isinstance(value, str):
            raise TypeError(value)
        return datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise ProtocolError(f"{where}: expected an ISO 8601 time or null, got {value!r}"[:300]) from None
