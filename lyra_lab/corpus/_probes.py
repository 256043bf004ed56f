"""A user's own probes: questions about their corpus, one JSON object per line.

::

    {"id": "p1", "question": "...", "answer": "...", "evidence": ["turn-id", ...],
     "category"?: 1 | "temporal", "conversation_id"?: "...", "asked_at"?: ISO or epoch,
     "adversarial"?: false, "abstention"?: false}

Other keys are kept in ``Probe.meta``.  Given the corpus, every evidence id must
name a turn (an unknown id is an error naming the line and the id), and a
missing ``conversation_id`` is inferred: the one conversation holding all the
evidence, or the corpus's only conversation.

Without a corpus nothing can be checked or inferred: a probe with no
``conversation_id`` gets ``""`` (:data:`UNRESOLVED`), resolved when the probes
are joined with a corpus — ``load(corpus_path, probes=probes)`` or
:func:`resolve_probes` — by the same rules as above.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

from lyra_lab._records import SCHEMA_KEY, RecordError, schema_of
from lyra_lab.corpus._json_util import Fields, decode_utf8
from lyra_lab.corpus._model import PROBE_LINE_KEYS, Corpus, CorpusFormatError, Probe

UNRESOLVED = ""  # conversation_id of a probe read without a corpus and not naming its conversation
KNOWN_KEYS = {SCHEMA_KEY, *PROBE_LINE_KEYS}


def looks_like(record: object) -> bool:
    return isinstance(record, dict) and "question" in record and "answer" in record and "role" not in record


def load_probes(path: str | os.PathLike[str], corpus: Corpus | None = None) -> list[Probe]:
    """Read a probes JSONL file, checked against ``corpus`` when given.

    Args:
        path: the probes file.
        corpus: the corpus the probes ask about; without it evidence ids are not
            checked and a missing ``conversation_id`` is left ``""`` until the
            probes are joined with a corpus (see :func:`resolve_probes`).

    Returns:
        The probes in file order.

    Raises:
        CorpusFormatError: a broken line, a missing field, a repeated probe id, an
            evidence id that names no turn, or a conversation that cannot be inferred.
        FileNotFoundError: no such file.
    """
    spath = str(path)
    text = decode_utf8(spath, Path(path).read_bytes())
    return parse(spath, text.split("\n"), corpus)  # not splitlines(): see _load


def parse(path: str, lines: list[str], corpus: Corpus | None) -> list[Probe]:
    f = Fields(path)
    owners = _owners(corpus) if corpus is not None else None
    probes: list[Probe] = []
    first_line: dict[str, int] = {}
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        where = f"line {n}"
        rec = f.json_line(raw, where)
        probe = _probe(f, rec, where, owners)
        if probe.id in first_line:
            raise f.error(where, f"probe id {probe.id!r} repeats line {first_line[probe.id]}")
        first_line[probe.id] = n
        probes.append(probe)
    if not probes:
        raise f.error("", "no probes (the file is empty)")
    return probes


class _Owners(NamedTuple):
    """A corpus's conversation ids, and for each turn id the ids of the conversations holding it."""

    conversations: set[str]
    of_turn: dict[str, list[str]]


def _owners(corpus: Corpus) -> _Owners:
    """The conversation ids of ``corpus``, and turn id → ids of the conversations holding a turn with that id."""
    owners: dict[str, list[str]] = defaultdict(list)
    for conv in corpus.conversations:
        for turn in conv.turns():
            if not owners[turn.id] or owners[turn.id][-1] != conv.id:
                owners[turn.id].append(conv.id)
    return _Owners({c.id for c in corpus.conversations}, owners)


def _probe(f: Fields, rec: dict[str, Any], where: str, owners: _Owners | None) -> Probe:
    # line-based: "line 12: 'question' ..." reads better than a JSON path per field
    def field(key: str, types: type | tuple[type, ...], required: bool = True) -> Any:
        try:
            return f.get(rec, key, "", types, required=required)
        except CorpusFormatError as exc:
            raise f.error(where, f"{key!r}: {exc.problem}") from None

    try:  # a line written with its envelope ("schema": "probe/1"), or the old shape without it
        schema_of(Probe).version_of(rec, where)
    except RecordError as exc:
        raise f.error(where, str(exc).removeprefix(f"{where}: ")) from None
    pid = str(field("id", (str, int)))
    evidence = field("evidence", list, required=False) or []
    bad = [e for e in evidence if not isinstance(e, str)]
    if bad:
        raise f.error(where, f"'evidence' must list turn ids as strings, got {bad[0]!r}")
    conv_id = field("conversation_id", str, required=False)
    if owners is not None:
        conv_id = _check_evidence(f, where, _Claim(pid, evidence, conv_id), owners)
    elif conv_id is None:
        conv_id = UNRESOLVED
    try:
        asked = f.time(rec.get("asked_at"), where)
    except CorpusFormatError as exc:
        raise f.error(where, f"'asked_at': {exc.problem}") from None
    return Probe(id=pid, conversation_id=conv_id, question=field("question", str),
                 answer=str(field("answer", (str, int, float))), evidence=tuple(evidence),
                 category=field("category", (int, str), required=False), asked_at=asked,
                 adversarial=bool(field("adversarial", bool, required=False)),
                 abstention=bool(field("abstention", bool, required=False)),
                 meta={k: v for k, v in rec.items() if k not in KNOWN_KEYS})


class _Claim(NamedTuple):
    """What a probe says it asks about: its evidence turn ids and, optionally, the conversation."""

    probe_id: str
    evidence: list[str]
    conversation_id: str | None


def _check_evidence(f: Fields, where: str, claim: _Claim, corpus: _Owners) -> str:
    """The probe's conversation id: the one it names, checked, or the one its evidence turns share."""
    pid, evidence, conv_id = claim
    known, owners = corpus
    if conv_id is not None and conv_id not in known:
        raise f.error(where, f"probe {pid!r}: conversation_id {conv_id!r} is not in the corpus")
    for tid in evidence:
        holders = owners.get(tid, [])
        if not holders or (conv_id is not None and conv_id not in holders):
            scope = f"conversation {conv_id!r}" if conv_id is not None else "the corpus"
            raise f.error(where, f"probe {pid!r}: evidence id {tid!r} matches no turn in {scope}")
    if conv_id is not None:
        return conv_id
    if not evidence:
        if len(known) == 1:
            return next(iter(known))
        raise f.error(where, f"probe {pid!r} has no evidence and no 'conversation_id'; "
                             f"the corpus has {len(known)} conversations")
    common = set(owners[evidence[0]]).intersection(*(owners[t] for t in evidence[1:]))
    if len(common) == 1:
        return common.pop()
    if not common:
        raise f.error(where, f"probe {pid!r}: evidence ids span several conversations; set 'conversation_id'")
    raise f.error(where, f"probe {pid!r}: evidence ids occur in conversations {', '.join(sorted(common))}; "
                         "set 'conversation_id'")


def resolve_probes(probes: list[Probe], corpus: Corpus, source: str = "probes") -> list[Probe]:
    """Check probes read without a corpus against ``corpus``, inferring any unresolved ``conversation_id``.

    Args:
        probes: probes from ``load_probes(path)`` (or built by hand).
        corpus: the corpus they ask about.
        source: what to name in error messages (the probes file, if known).

    Raises:
        CorpusFormatError: an evidence id naming no turn, an unknown
            conversation, or a conversation that cannot be inferred.
    """
    f = Fields(source)
    owners = _owners(corpus)
    resolved = []
    for probe in probes:
        conv_id = probe.conversation_id if probe.conversation_id != UNRESOLVED else None
        conv_id = _check_evidence(f, "", _Claim(probe.id, list(probe.evidence), conv_id), owners)
        resolved.append(replace(probe, conversation_id=conv_id))
    return resolved
