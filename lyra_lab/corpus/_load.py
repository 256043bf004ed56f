"""``load(path)``: any supported export → one Corpus, the format sniffed from the content.

Sniffing looks at the bytes, never the file name: an SQLite header means a Lyra
memory DB; a zip is searched for ``conversations.json`` (the ChatGPT and
Claude.ai exports); a first line with the ``lyra_lab_corpus`` header is the
native format; a JSON document is recognised by the keys of its first item (or
of the object itself: one ChatGPT conversation, one LongMemEval instance); a
file of one JSON object per line is generic JSONL.  ``format=`` skips sniffing.

Everything is parsed and checked before the Corpus is built, so a bad file
raises :class:`CorpusFormatError` and nothing is half-imported.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path
from typing import Iterable

from lyra_lab._registry import ConfigError
from lyra_lab.corpus import (
    _chatgpt,
    _claude,
    _jsonl,
    _locomo,
    _longmemeval,
    _lyra_db,
    _native,
    _native_check,
    _probes,
)
from lyra_lab.corpus._json_util import decode_utf8, json_problem, parse_json, sha256_hex
from lyra_lab.corpus._model import Conversation, Corpus, CorpusFormatError, Probe

# whole-document JSON formats, in sniffing order
_JSON_FORMATS = {"chatgpt": _chatgpt, "claude": _claude, "locomo": _locomo, "longmemeval": _longmemeval}
_WITH_ATTACHMENTS = ("chatgpt", "claude")
FORMATS: tuple[str, ...] = ("native", *_JSON_FORMATS, "jsonl", "lyra_db")
_ZIP_MAGIC = b"PK\x03\x04"
_EXPORT_MEMBER = "conversations.json"

Parsed = tuple[tuple[Conversation, ...], tuple[Probe, ...]]


def load(path: str | os.PathLike[str], format: str = "auto", *,
         probes: str | os.PathLike[str] | Iterable[Probe] | None = None, name: str | None = None,
         include_attachments: bool = True) -> Corpus:
    """Import a conversation export, benchmark file or native corpus.

    Args:
        path: the file: ChatGPT/Claude ``conversations.json`` or export ``.zip``,
            ``locomo10.json``, a LongMemEval JSON, generic JSONL, a Lyra SQLite
            DB, or a corpus saved by ``Corpus.save``.
        format: one of :data:`FORMATS`, or ``"auto"`` to sniff the content.
        probes: optional probes JSONL (see :func:`load_probes`), or probes
            already read by ``load_probes(path)`` without a corpus, checked
            against the corpus (a missing ``conversation_id`` inferred) and
            appended to its own probes.
        name: corpus name and, for single-user exports, the conversation id;
            defaults to the file stem.
        include_attachments: import what the user attached or had written
            beside the chat (Claude attachments' extracted text, ChatGPT canvas
            documents) as turns marked ``meta["part"]``.  On by default: a user
            expects them remembered; pass False to keep only chat messages.

    Returns:
        The corpus, recording ``source`` (the path), ``sha256`` of the file's
        bytes and ``format``.  A native file returns exactly what was saved.

    Raises:
        CorpusFormatError: the file cannot be read as the (sniffed) format; the
            message names the file, the place and the problem.
        FileNotFoundError: no such file.
        ConfigError: an unknown ``format``.
    """
    if format != "auto" and format not in FORMATS:
        raise ConfigError(f"unknown corpus format {format!r}; known: auto, {', '.join(FORMATS)}")
    file = Path(path)
    if file.is_dir():
        hint = f"; give its {_EXPORT_MEMBER}" if (file / _EXPORT_MEMBER).is_file() else ""
        raise CorpusFormatError(file, "", f"is a directory, not a file{hint}")
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise CorpusFormatError(file, "", f"cannot read: {exc.strerror or exc}") from None
    fmt, parsed = _parse(file, data, format, name or file.stem, include_attachments)
    if isinstance(parsed, Corpus):  # native: the saved provenance is part of what round-trips
        corpus = parsed if name is None else Corpus(name, parsed.conversations, parsed.probes,
                                                    parsed.source, parsed.sha256, parsed.format)
    else:
        corpus = Corpus(name=name or file.stem, conversations=parsed[0], probes=parsed[1], source=str(file),
                        sha256=sha256_hex(data), format=fmt)
    if probes is not None:
        corpus = _add_probes(corpus, probes)
    return corpus


def _add_probes(corpus: Corpus, probes: str | os.PathLike[str] | Iterable[Probe]) -> Corpus:
    if isinstance(probes, (str, os.PathLike)):
        where: object = probes
        extra = _probes.load_probes(probes, corpus)
    else:
        where = "probes"
        extra = _probes.resolve_probes(list(probes), corpus)
    own = {p.id for p in corpus.probes}
    for probe in extra:
        if probe.id in own:
            raise CorpusFormatError(where, "", f"probe id {probe.id!r} is already one of the corpus's own probes")
    return corpus.with_probes(corpus.probes + tuple(extra))


def _parse(file: Path, data: bytes, format: str, name: str, include_attachments: bool
           ) -> tuple[str, Parsed | Corpus]:
    if _lyra_db.looks_like(data[:16]):
        if format not in ("auto", "lyra_db"):
            raise CorpusFormatError(file, "", f"is an SQLite database, not {format}")
        return "lyra_db", _lyra_db.parse(file, name)
    if format == "lyra_db":
        raise CorpusFormatError(file, "", "not an SQLite database (format lyra_db)")
    where = str(file)
    if data.startswith(_ZIP_MAGIC):
        member, data = _zip_member(file, data)
        where = f"{file}!{member}"
    text = decode_utf8(where, data)
    if not text.strip():
        raise CorpusFormatError(where, "", "empty file")
    # only "\n" ends a record: str.splitlines() would also split inside JSON strings
    # holding U+2028, U+0085 and friends, which json.dumps(ensure_ascii=False) leaves raw
    lines = text.split("\n")
    n, first = next((n, ln) for n, ln in enumerate(lines, start=1) if ln.strip())
    if _native.is_native(first) and format in ("auto", "native"):
        _native_check.check_lines(where, lines)
        return "native", _native.parse(where, lines)
    if format == "native":
        raise CorpusFormatError(where, f"line {n}", "not a lyra-lab corpus (no lyra_lab_corpus header)")
    if format == "jsonl":
        return "jsonl", _jsonl.parse(where, lines, name)
    if format in _JSON_FORMATS:
        return format, _parse_json_format(format, where, parse_json(where, text), name, include_attachments)
    return _sniff(where, text, lines, name, include_attachments)


def _parse_json_format(fmt: str, where: str, doc: object, name: str, include_attachments: bool) -> Parsed:
    if fmt in _WITH_ATTACHMENTS:
        return _JSON_FORMATS[fmt].parse(where, doc, name, include_attachments=include_attachments)
    return _JSON_FORMATS[fmt].parse(where, doc, name)


def _sniff(where: str, text: str, lines: list[str], name: str, include_attachments: bool) -> tuple[str, Parsed]:
    if text.lstrip()[0] not in "[{":
        raise CorpusFormatError(where, "line 1", "cannot tell the format: not JSON, JSONL, SQLite or a zip; "
                                f"known formats: {', '.join(FORMATS)}")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":
            raise CorpusFormatError(where, f"line {exc.lineno} column {exc.colno}", json_problem(exc, text)) from None
        # several JSON values one after another: a line-per-record file
        n, first = next((n, ln) for n, ln in enumerate(lines, start=1) if ln.strip())
        try:
            doc = json.loads(first)
        except json.JSONDecodeError as line_exc:
            raise CorpusFormatError(where, f"line {n}", f"not valid JSON ({line_exc.msg})") from None
    else:
        for fmt, module in _JSON_FORMATS.items():
            if module.looks_like(doc):
                return fmt, _parse_json_format(fmt, where, doc, name, include_attachments)
        if isinstance(doc, list) and not doc:
            raise CorpusFormatError(where, "$", "empty JSON list: nothing to import")
    if _jsonl.looks_like(doc):
        return "jsonl", _jsonl.parse(where, lines, name)
    if _probes.looks_like(doc):
        raise CorpusFormatError(where, "", "this is a probes file, not a corpus; load it with load_probes(path, "
                                "corpus) or `lyra-lab import CORPUS --probes PATH`")
    raise CorpusFormatError(where, "", f"cannot tell the format of {_describe(doc)}; known formats: "
                            f"{', '.join(FORMATS)} (pass format= to force one)")


def _describe(doc: object) -> str:
    if isinstance(doc, list) and doc and isinstance(doc[0], dict):
        return f"a JSON list whose first item has keys {sorted(doc[0])[:8]}"
    if isinstance(doc, dict):
        return f"JSON with keys {sorted(doc)[:8]}"
    return f"a JSON {type(doc).__name__}"


def _zip_member(file: Path, data: bytes) -> tuple[str, bytes]:
    """The export's ``conversations.json`` (the shallowest one) from a zip archive."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == _EXPORT_MEMBER]
        if not names:
            listed = ", ".join(archive.namelist()[:10]) or "nothing"
            raise CorpusFormatError(file, "", f"zip archive has no {_EXPORT_MEMBER} (it holds: {listed})")
        member = min(names, key=lambda n: (n.count("/"), n))
        return member, archive.read(member)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as exc:
        raise CorpusFormatError(file, "", f"broken zip archive ({exc})") from None
