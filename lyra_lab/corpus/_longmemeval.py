"""LongMemEval (Wu et al., ICLR 2025): ``longmemeval_{s,m,oracle}.json``.

A JSON list of instances ``{question_id, question_type, question, answer,
question_date, haystack_session_ids, haystack_dates, haystack_sessions,
answer_session_ids}``; each haystack session is a list of
``{role, content, has_answer?}``.  Choices made here:

* One Conversation per instance (id = ``question_id``), sessions in time order
  (the oracle file is not sorted), dates like ``"2023/05/20 (Sat) 02:21"`` taken
  as UTC; sessions with no turns are not imported.
* Session ids are the haystack ids; turn ids follow LongMemEval's own retrieval
  code, ``<session_id>_<k>`` with ``k`` 1-based.  A haystack id repeated inside
  one instance gets ``#2``, ``#3``… (its source id stays in ``meta``).
* Turn ``k`` gets the session time plus ``k-1`` seconds, keeping source order.
* A haystack session dated after ``question_date`` is kept but flagged
  ``Session.meta["after_question"] = True`` and counted in the probe's
  ``meta["sessions_after_question"]``.  A lone instance (an object, not a list)
  is read as a one-instance file.
* One Probe per instance: ``category`` = ``question_type``; evidence = the turns
  marked ``has_answer``, else every turn of the answer sessions; an id holding
  ``_abs`` anywhere is flagged ``abstention=True`` (LongMemEval's ``evaluate_qa.py`` and
  ``print_qa_metrics.py``: ``'_abs' in question_id``); ``asked_at`` = ``question_date``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple

from lyra_lab.corpus._json_util import Fields, Slot, jpath
from lyra_lab.corpus._model import Conversation, Probe, Session, Turn, is_role

_DATE = re.compile(r"\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\([A-Za-z]+\))?\s*(\d{1,2}):(\d{2})\s*\Z")


def looks_like(doc: object) -> bool:
    first = doc[0] if isinstance(doc, list) and doc else doc  # a list of instances, or one on its own
    return isinstance(first, dict) and "haystack_sessions" in first and "question_id" in first


def parse_date(value: str) -> datetime:
    """``"2023/05/20 (Sat) 02:21"`` → aware UTC datetime."""
    m = _DATE.match(value)
    if m is None:
        raise ValueError(f"not a LongMemEval date like '2023/05/20 (Sat) 02:21': {value!r}")
    year, month, day, hour, minute = (int(g) for g in m.groups())
    return datetime(year, month, day, hour, minute, tzinfo=timezone.utc)


def parse(path: str, doc: object, name: str) -> tuple[tuple[Conversation, ...], tuple[Probe, ...]]:
    """Parse LongMemEval instances: one Conversation and one Probe each."""
    f = Fields(path)
    conversations: list[Conversation] = []
    probes: list[Probe] = []
    seen: dict[str, str] = {}
    for where, obj in f.places(doc, "instances"):
        conv, probe = _instance(f, obj, where)
        f.first_at(seen, conv.id, where, "question_id", "question_id")
        conversations.append(conv)
        probes.append(probe)
    return tuple(conversations), tuple(probes)


def _date(f: Fields, value: object, where: str) -> datetime:
    if not isinstance(value, str):
        raise f.error(where, f"expected a date string, got {value!r}")
    try:
        return parse_date(value)
    except ValueError as exc:
        raise f.error(where, str(exc)) from None


def _instance(f: Fields, inst: dict[str, Any], where: str) -> tuple[Conversation, Probe]:
    qid = f.text(inst, "question_id", where)
    ids = f.get(inst, "haystack_session_ids", where, list)
    dates = f.get(inst, "haystack_dates", where, list)
    bodies = f.get(inst, "haystack_sessions", where, list)
    if not len(ids) == len(dates) == len(bodies):
        raise f.error(where, f"haystack_session_ids, haystack_dates and haystack_sessions differ in length "
                             f"({len(ids)}, {len(dates)}, {len(bodies)})")
    dated: list[tuple[datetime, Session]] = []
    by_source: dict[str, list[Session]] = {}
    for n, (sid, date, body) in enumerate(zip(ids, dates, bodies)):
        if not isinstance(sid, str):
            raise f.error(jpath(jpath(where, "haystack_session_ids"), n), f"expected a string, got {sid!r}")
        start = _date(f, date, jpath(jpath(where, "haystack_dates"), n))
        repeats = len(by_source.get(sid, []))
        unique = sid if repeats == 0 else f"{sid}#{repeats + 1}"
        session = _session(f, body, jpath(jpath(where, "haystack_sessions"), n), Slot(qid, unique, start))
        if repeats:
            session = Session(session.id, qid, session.turns, started_at=start, meta={"source_session_id": sid})
        by_source.setdefault(sid, []).append(session)
        if session.turns:
            dated.append((start, session))
    dated.sort(key=lambda pair: pair[0])  # stable: ties keep haystack order
    asked = _date(f, f.text(inst, "question_date", where), jpath(where, "question_date"))
    # a session dated after the question could not have been remembered when it was asked
    sessions = [s if start <= asked else replace(s, meta={**s.meta, "after_question": True})
                for start, s in dated]
    conv = Conversation(id=qid, sessions=tuple(sessions), meta={"source_format": "longmemeval"})
    return conv, _probe(f, inst, where, _Haystack(conv, by_source), asked)


def _session(f: Fields, body: object, where: str, slot: Slot) -> Session:
    qid, sid, start = slot
    turns = []
    for k, raw in enumerate(f.items(body, where)):
        twhere = jpath(where, k)
        msg = f.obj(raw, twhere)
        role = f.text(msg, "role", twhere)
        if not is_role(role):
            raise f.error(jpath(twhere, "role"), f"unknown role {role!r} (expected user or assistant)")
        meta = {"has_answer": True} if msg.get("has_answer") is True else {}
        turns.append(Turn(id=f"{sid}_{k + 1}", conversation_id=qid, session_id=sid, role=role,
                          text=f.text(msg, "content", twhere, required=False) or "",
                          timestamp=start + timedelta(seconds=k), meta=meta))
    return Session(id=sid, conversation_id=qid, turns=tuple(turns), started_at=start)


class _Haystack(NamedTuple):
    """An instance's haystack as read: the conversation, and its sessions by source session id."""

    conversation: Conversation
    by_source: dict[str, list[Session]]  # a repeated source id holds each of its copies


def _probe(f: Fields, inst: dict[str, Any], where: str, haystack: _Haystack, asked: datetime) -> Probe:
    conv, by_source = haystack
    answer_ids = f.get(inst, "answer_session_ids", where, list, required=False) or []
    for k, sid in enumerate(answer_ids):
        if not isinstance(sid, str):
            raise f.error(jpath(jpath(where, "answer_session_ids"), k), f"expected a session id string, got {sid!r}")
    evidence = [t.id for t in conv.turns() if t.meta.get("has_answer")]
    missing = [sid for sid in answer_ids if sid not in by_source]
    if not evidence:
        evidence = [t.id for sid in answer_ids for s in by_source.get(sid, []) for t in s.turns]
    meta: dict[str, Any] = {"answer_session_ids": list(answer_ids)}
    if missing:
        meta["dropped_evidence"] = missing
    after = sum(1 for s in conv.sessions if s.meta.get("after_question"))
    if after:
        meta["sessions_after_question"] = after
    qid = conv.id
    return Probe(id=qid, conversation_id=qid, question=f.text(inst, "question", where),
                 answer=f.answer(inst, "answer", where), evidence=tuple(evidence),
                 category=f.text(inst, "question_type", where, required=False),
                 asked_at=asked,
                 abstention="_abs" in qid, meta=meta)
