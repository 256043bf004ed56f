"""LoCoMo (Maharana et al., ACL 2024): ``locomo10.json``.

A JSON list of samples ``{sample_id, conversation, qa, ...}``.  One Conversation
per sample (id = ``sample_id``); ``conversation`` holds ``speaker_a``,
``speaker_b``, ``session_<n>`` (turn lists) and ``session_<n>_date_time``
(``"1:56 pm on 8 May, 2023"``, taken as UTC).  Choices made here:

* Sessions with no turns (or only a date) are not imported.
* ``speaker_a`` is role ``user``, ``speaker_b`` is ``assistant``; names stay in
  ``Turn.speaker``.
* The source times sessions, not turns: turn ``i`` (0-based) of a session gets
  the session's time plus ``i`` seconds, so replay keeps the source order.
* Turn ids are ``dia_id`` qualified by the sample: ``conv-26:D1:3``; session ids
  ``conv-26:session_1``.  Image turns carry their caption:
  ``text + " [image: <blip_caption>]"``.
* Probes come from ``qa`` (id ``<sample_id>:qa<j>``, ``j`` its index), integer
  ``category`` kept, ``asked_at`` one second after the sample's last turn.
  Category-5 items usually have ``adversarial_answer`` instead of ``answer``;
  it is used as ``answer`` and the probe flagged ``adversarial=True``.  Note that
  LoCoMo's own scorer treats that text as the *trap*: a correct reply to an
  adversarial probe says the conversation does not mention it.
* Evidence ids are qualified like turn ids.  The file has a few malformed ones;
  mechanical slips are repaired (``"D8:6; D9:17"`` split, ``"D30:05"`` →
  ``D30:5``, ``"D:11:26"`` → ``D11:26``) and ids naming no turn are dropped.
  Whenever the kept list differs from the source, ``meta["raw_evidence"]`` keeps
  the original and ``meta["dropped_evidence"]`` lists what matched nothing.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

from lyra_lab.corpus._json_util import Fields, Slot, jpath
from lyra_lab.corpus._model import Conversation, Probe, Role, Session, Turn

_SESSION_KEY = re.compile(r"session_(\d+)\Z")
_DATE = re.compile(r"\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*\Z", re.I)
_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"], start=1)}
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)\Z")


def looks_like(doc: object) -> bool:
    return (isinstance(doc, list) and bool(doc) and isinstance(doc[0], dict)
            and "sample_id" in doc[0] and "conversation" in doc[0])


def parse(path: str, doc: object, name: str) -> tuple[tuple[Conversation, ...], tuple[Probe, ...]]:
    """Parse LoCoMo samples: one Conversation each, probes from their ``qa``."""
    f = Fields(path)
    samples = f.items(doc, "$")
    if not samples:
        raise f.error("$", "no samples")
    conversations: list[Conversation] = []
    probes: list[Probe] = []
    seen: dict[str, str] = {}
    for i, raw in enumerate(samples):
        where = f"$[{i}]"
        sample = f.obj(raw, where)
        conv = _conversation(f, sample, where)
        if conv.id in seen:
            raise f.error(jpath(where, "sample_id"), f"sample_id {conv.id!r} repeats {seen[conv.id]}")
        seen[conv.id] = where
        conversations.append(conv)
        probes.extend(_probes(f, sample, where, conv))
    return tuple(conversations), tuple(probes)


def parse_date(value: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` → aware UTC datetime (the source gives no zone)."""
    m = _DATE.match(value)
    month = _MONTHS.get(m.group(5).lower()) if m else None
    if m is None or month is None:
        raise ValueError(f"not a LoCoMo date like '1:56 pm on 8 May, 2023': {value!r}")
    hour = int(m.group(1)) % 12 + (12 if m.group(3).lower() == "p" else 0)
    return datetime(int(m.group(6)), month, int(m.group(4)), hour, int(m.group(2)), tzinfo=timezone.utc)


def _conversation(f: Fields, sample: dict[str, Any], where: str) -> Conversation:
    cid = f.text(sample, "sample_id", where)
    cwhere = jpath(where, "conversation")
    body = f.get(sample, "conversation", where, dict)
    speakers: dict[str, Role] = {f.text(body, "speaker_a", cwhere): "user", f.text(body, "speaker_b", cwhere): "assistant"}
    if len(speakers) < 2:
        raise f.error(jpath(cwhere, "speaker_b"), "is the same name as speaker_a; roles would be ambiguous")
    numbers = sorted(int(m.group(1)) for m in map(_SESSION_KEY.match, body) if m)
    raw_summaries = sample.get("session_summary")
    summaries: dict[str, Any] = raw_summaries if isinstance(raw_summaries, dict) else {}
    sessions: list[Session] = []
    seen: set[str] = set()
    for n in numbers:
        raw_turns = f.get(body, f"session_{n}", cwhere, list, required=False) or []
        if not raw_turns:
            continue
        date_key = f"session_{n}_date_time"
        try:
            start = parse_date(f.text(body, date_key, cwhere))
        except ValueError as exc:
            raise f.error(jpath(cwhere, date_key), str(exc)) from None
        sid = f"{cid}:session_{n}"
        turns = []
        for k, raw in enumerate(raw_turns):
            twhere = jpath(jpath(cwhere, f"session_{n}"), k)
            turn = _turn(f, f.obj(raw, twhere), twhere, speakers, Slot(cid, sid, start + timedelta(seconds=k)))
            if turn.id in seen:
                raise f.error(jpath(twhere, "dia_id"), f"dia_id {turn.id.split(':', 1)[1]!r} repeats")
            seen.add(turn.id)
            turns.append(turn)
        summary = summaries.get(f"session_{n}_summary")
        session_meta = {"locomo_summary": summary} if isinstance(summary, str) else {}
        sessions.append(Session(id=sid, conversation_id=cid, turns=tuple(turns), started_at=start, meta=session_meta))
    if not sessions:
        raise f.error(cwhere, "no session_<n> with turns")
    meta: dict[str, Any] = {"source_format": "locomo", "speakers": {name: role for name, role in speakers.items()},
            "turn_time": "session start + i seconds (the source times sessions only)"}
    return Conversation(id=cid, sessions=tuple(sessions), meta=meta)


def _turn(f: Fields, raw: dict[str, Any], where: str, speakers: dict[str, Role], slot: Slot) -> Turn:
    cid, sid, stamp = slot
    speaker = f.text(raw, "speaker", where)
    if speaker not in speakers:
        raise f.error(jpath(where, "speaker"), f"speaker {speaker!r} is neither speaker_a nor speaker_b")
    text = f.text(raw, "text", where, required=False) or ""
    caption = raw.get("blip_caption")
    meta: dict[str, Any] = {}
    if isinstance(caption, str) and caption:
        text = f"{text} [image: {caption}]" if text else f"[image: {caption}]"
        meta["image_caption"] = caption
        if isinstance(raw.get("img_url"), list):
            meta["img_url"] = [u for u in raw["img_url"] if isinstance(u, str)]
    return Turn(id=f"{cid}:{f.text(raw, 'dia_id', where)}", conversation_id=cid, session_id=sid,
                role=speakers[speaker], text=text, timestamp=stamp, speaker=speaker, meta=meta)


def _probes(f: Fields, sample: dict[str, Any], where: str, conv: Conversation) -> list[Probe]:
    turn_ids = {t.id for t in conv.turns()}
    asked = max(t.timestamp for t in conv.turns() if t.timestamp is not None) + timedelta(seconds=1)
    probes = []
    for j, raw in enumerate(f.get(sample, "qa", where, list, required=False) or []):
        qwhere = jpath(jpath(where, "qa"), j)
        qa = f.obj(raw, qwhere)
        meta: dict[str, Any] = {}
        answer = f.answer(qa, "answer", qwhere, required=False)
        adversarial = "adversarial_answer" in qa
        if adversarial:
            meta["adversarial_answer"] = f.answer(qa, "adversarial_answer", qwhere)
        if answer is None:
            if not adversarial:
                raise f.error(jpath(qwhere, "answer"), "missing required field (nor is there an adversarial_answer)")
            answer = meta["adversarial_answer"]
            meta["answer_field"] = "adversarial_answer"
        raw_ev = f.get(qa, "evidence", qwhere, list, required=False) or []
        kept, dropped = _evidence(f, raw_ev, jpath(qwhere, "evidence"), conv.id, turn_ids)
        if kept != [f"{conv.id}:{e}" for e in raw_ev]:
            meta["raw_evidence"] = list(raw_ev)
        if dropped:
            meta["dropped_evidence"] = dropped
        category = f.get(qa, "category", qwhere, int, required=False)
        probes.append(Probe(id=f"{conv.id}:qa{j}", conversation_id=conv.id, question=f.text(qa, "question", qwhere),
                            answer=answer, evidence=tuple(kept), category=category, asked_at=asked,
                            adversarial=adversarial, meta=meta))
    return probes


def _evidence(f: Fields, raw: list[Any], where: str, cid: str, turn_ids: set[str]) -> tuple[list[str], list[str]]:
    kept: list[str] = []
    dropped: list[str] = []
    for k, item in enumerate(raw):
        if not isinstance(item, str):
            raise f.error(jpath(where, k), f"evidence id must be a string, got {item!r}")
        for token in filter(None, re.split(r"[;,\s]+", item)):
            m = _EVIDENCE.match(token)
            qualified = f"{cid}:D{int(m.group(1))}:{int(m.group(2))}" if m else None
            if qualified in turn_ids:
                if qualified not in kept:
                    kept.append(qualified)
            else:
                dropped.append(token)
    return kept, dropped
