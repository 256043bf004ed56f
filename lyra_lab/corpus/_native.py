"""lyra-lab's own corpus format: JSON Lines that round-trip a Corpus losslessly.

Line 1 is a header; then one record per line in document order::

    {"lyra_lab_corpus": 1, "name": ..., "source": ..., "sha256": ..., "format": ...}
    {"type": "conversation", "id": ..., "title": ..., "meta": {...}}
    {"type": "session", "id": ..., "conversation_id": ..., "title": ..., "started_at": ..., "gist": ..., "meta": {...}}
    {"type": "turn", "id": ..., "conversation_id": ..., "session_id": ..., "role": ..., "text": ..., ...}
    {"type": "probe", "id": ..., "conversation_id": ..., "question": ..., "answer": ..., "evidence": [...], ...}

Datetimes are ISO 8601 with their UTC offset.  This module reads the format; the writer
(``dump_lines``, ``save``) sits beside ``Corpus.save`` in ``_model``.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from lyra_lab.corpus._json_util import Fields
from lyra_lab.corpus._model import MAGIC, VERSION, Conversation, Corpus, CorpusFormatError, Probe, Session, Turn


def is_native(first_line: str) -> bool:
    return f'"{MAGIC}"' in first_line[:200]


def parse(path: str | Path, lines: Iterable[str]) -> Corpus:
    """Parse native lines; any problem raises CorpusFormatError naming the line."""
    fields = Fields(str(path))
    header: dict[str, Any] | None = None
    convs: list[dict[str, Any]] = []
    probes: list[Probe] = []
    by_conv: dict[str, dict[str, Any]] = {}
    by_session: dict[tuple[str, str], dict[str, Any]] = {}
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        where = f"line {n}"
        rec = fields.json_line(raw, where)
        try:
            if header is None:
                if rec.get(MAGIC) != VERSION:
                    raise CorpusFormatError(path, where, f"not a lyra-lab corpus header (want {MAGIC}: {VERSION})")
                header = rec
                continue
            kind = rec.get("type")
            if kind == "conversation":
                new_conv: dict[str, Any] = {"rec": rec, "sessions": []}
                convs.append(new_conv)
                by_conv[rec["id"]] = new_conv
            elif kind == "session":
                owner = by_conv.get(rec["conversation_id"])
                if owner is None:
                    raise CorpusFormatError(path, where, f"session before its conversation {rec['conversation_id']!r}")
                new_sess: dict[str, Any] = {"rec": rec, "turns": [], "started_at": _dt(rec.get("started_at"))}
                owner["sessions"].append(new_sess)
                by_session[(rec["conversation_id"], rec["id"])] = new_sess
            elif kind == "turn":
                sess = by_session.get((rec["conversation_id"], rec["session_id"]))
                if sess is None:
                    raise CorpusFormatError(path, where, f"turn before its session {rec['session_id']!r}")
                sess["turns"].append(Turn(
                    id=rec["id"], conversation_id=rec["conversation_id"], session_id=rec["session_id"],
                    role=rec["role"], text=rec["text"], timestamp=_dt(rec.get("timestamp")),
                    speaker=rec.get("speaker"), meta=rec.get("meta") or {}))
            elif kind == "probe":
                probes.append(Probe(
                    id=rec["id"], conversation_id=rec["conversation_id"], question=rec["question"],
                    answer=rec["answer"], evidence=tuple(rec.get("evidence") or ()),
                    category=rec.get("category"), asked_at=_dt(rec.get("asked_at")),
                    adversarial=bool(rec.get("adversarial")), abstention=bool(rec.get("abstention")),
                    meta=rec.get("meta") or {}))
            else:
                raise CorpusFormatError(path, where, f"unknown record type {kind!r}")
        except KeyError as exc:
            raise CorpusFormatError(path, where, f"missing field {exc.args[0]!r}") from None
        except (TypeError, ValueError) as exc:
            if isinstance(exc, CorpusFormatError):
                raise
            raise CorpusFormatError(path, where, str(exc)) from None
    if header is None:
        raise CorpusFormatError(path, "line 1", "empty file")
    conversations = tuple(
        Conversation(
            id=c["rec"]["id"], title=c["rec"].get("title"), meta=c["rec"].get("meta") or {},
            sessions=tuple(
                Session(id=s["rec"]["id"], conversation_id=s["rec"]["conversation_id"], turns=tuple(s["turns"]),
                        title=s["rec"].get("title"), started_at=s["started_at"],
                        gist=s["rec"].get("gist"), meta=s["rec"].get("meta") or {})
                for s in c["sessions"]))
        for c in convs)
    return Corpus(name=header.get("name") or Path(path).stem, conversations=conversations, probes=tuple(probes),
                  source=header.get("source"), sha256=header.get("sha256"), format=header.get("format"))


def _dt(value: str | None) -> datetime | None:
    if value is None:
        return None
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        raise ValueError(f"timestamp {value!r} has no UTC offset")
    return parsed
