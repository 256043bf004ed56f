"""Fuzzing every importer with mutated valid files: the only outcomes allowed are a valid
Corpus (or probe list) and a CorpusFormatError naming the file.

Mutations: a cut anywhere, a wrong type at any JSON path, a deleted key or item, a
duplicated item (repeated ids), a string swapped for another string of the file (dangling
references, parent cycles, repeated ids), a huge string, invalid UTF-8 bytes.

The default budget keeps ``tests/corpus`` quick; ``LYRA_FUZZ_EXAMPLES=5000`` runs a long one.
Failures the long run found are kept as plain regression tests at the end of this file.
Long runs since the importer fixes (2026-11-23, all nine readers): 5,000 examples each with
``--hypothesis-seed=11`` (209 s wall) and 20,000 each with ``--hypothesis-seed=12`` (2,292 s wall,
at nice 19 on a busy machine) found nothing: every mutated file imported or failed with a
CorpusFormatError naming the file and the place.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lyra_lab.corpus import ROLES, Corpus, CorpusFormatError, Probe, load, load_probes
from lyra_lab.corpus._model import dump_lines

FIXTURES = Path(__file__).parents[1] / "fixtures" / "corpus"
EXAMPLES = int(os.environ.get("LYRA_FUZZ_EXAMPLES", "30"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 100,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

WHOLE_FILE_PROBLEMS = ("empty file", "no messages", "no probes", "this is a probes file", "cannot tell the format")
ODD_VALUES = [None, True, False, 0, -1, 2**70, 1.5e308, "", "x", "2023/05/20 (Sat) 02:21", [], {}, [None],
              {"a": 1}, [[]], "x" * 100_000]


def _json_doc(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def _lines_doc(name: str) -> list[Any]:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def _native_doc() -> list[Any]:
    corpus = load(FIXTURES / "longmemeval_mini.json")
    return [json.loads(line) for line in dump_lines(corpus)]


# name -> (document, as JSON lines?, reader)
MESSAGES = None


def _messages_corpus() -> Corpus:
    global MESSAGES
    if MESSAGES is None:
        MESSAGES = load(FIXTURES / "messages.jsonl")
    return MESSAGES


IMPORTERS: dict[str, tuple[Callable[[], Any], bool, Callable[[Path], Any]]] = {
    "chatgpt": (lambda: _json_doc("chatgpt/branched.json") + _json_doc("chatgpt/conversations.json"), False, load),
    "chatgpt_single": (lambda: _json_doc("chatgpt/single_conversation.json"), False, load),
    "claude": (lambda: _json_doc("claude/flattened.json") + _json_doc("claude/conversations.json"), False, load),
    "locomo": (lambda: _json_doc("locomo_mini.json"), False, load),
    "longmemeval": (lambda: _json_doc("longmemeval_mini.json"), False, load),
    "jsonl": (lambda: _lines_doc("messages.jsonl"), True, load),
    "native": (_native_doc, True, load),
    "probes": (lambda: _lines_doc("probes.jsonl"), True, lambda p: load_probes(p, _messages_corpus())),
    "probes_alone": (lambda: _lines_doc("probes.jsonl"), True, load_probes),
}


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every JSON path in ``value`` (the root excluded)."""
    out = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, child in items:
        out.append((*prefix, key))
        out.extend(_paths(child, (*prefix, key)))
    return out


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [s for child in children for s in _strings(child)] + (list(value) if isinstance(value, dict) else [])


def _at(doc: Any, path: tuple) -> tuple[Any, Any]:
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    return parent, path[-1]


@st.composite
def mutated_files(draw, importer: str) -> bytes:
    make, as_lines, _ = IMPORTERS[importer]
    doc = copy.deepcopy(make())
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(doc)
        kind = draw(st.sampled_from(["retype", "delete", "duplicate", "swap", "retype", "swap"]))
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent, key = _at(doc, path)
        if kind == "retype":
            parent[key] = copy.deepcopy(draw(st.sampled_from(ODD_VALUES)))
        elif kind == "delete":
            del parent[key]
        elif kind == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        elif kind == "swap":
            parent[key] = draw(st.sampled_from(_strings(doc) or ["x"]))
    if as_lines:
        data = "\n".join(json.dumps(rec, ensure_ascii=False) for rec in doc).encode("utf-8")
    else:
        data = json.dumps(doc, ensure_ascii=False, indent=draw(st.sampled_from([None, 1]))).encode("utf-8")
    damage = draw(st.sampled_from(["none", "none", "cut", "bytes"]))
    if damage == "cut":
        data = data[: draw(st.integers(0, max(len(data) - 1, 0)))]
    elif damage == "bytes":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xe2\x82"])) + data[at:]
    return data


def check_outcome(importer: str, data: bytes) -> None:
    """Read ``data`` with the importer; only a valid result or a CorpusFormatError naming the file may come out."""
    reader = IMPORTERS[importer][2]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "input.json"
        path.write_bytes(data)
        try:
            result = reader(path)
        except CorpusFormatError as exc:
            assert str(exc).startswith(f"{path}"), str(exc)
            assert exc.problem
            # only problems of the whole file may leave out the place
            assert exc.where or exc.problem.startswith(WHOLE_FILE_PROBLEMS), str(exc)
            return
        if isinstance(result, Corpus):
            _check_corpus(result, Path(tmp))
        else:
            assert result and all(isinstance(p, Probe) and isinstance(p.id, str)
                                  and isinstance(p.conversation_id, str) for p in result)


def _check_corpus(corpus: Corpus, tmp: Path) -> None:
    for conv in corpus.conversations:
        assert isinstance(conv.id, str)
        ids = [t.id for t in conv.turns()]
        assert len(ids) == len(set(ids)), "turn ids repeat inside a conversation"
        for session in conv.sessions:
            assert isinstance(session.id, str) and session.conversation_id == conv.id
            for turn in session.turns:
                assert isinstance(turn.id, str) and isinstance(turn.text, str) and turn.role in ROLES
                assert turn.session_id == session.id and turn.conversation_id == conv.id
                assert turn.timestamp is None or (isinstance(turn.timestamp, datetime) and turn.timestamp.tzinfo)
    for probe in corpus.probes:
        assert isinstance(probe.id, str) and isinstance(probe.question, str) and isinstance(probe.answer, str)
        assert all(isinstance(e, str) for e in probe.evidence)
    assert load(corpus.save(tmp / "again.jsonl")) == corpus  # whatever was imported can be saved


@pytest.mark.parametrize("importer", list(IMPORTERS))
def test_fixtures_are_valid(importer):
    make, as_lines, _ = IMPORTERS[importer]
    doc = make()
    data = ("\n".join(json.dumps(r) for r in doc) if as_lines else json.dumps(doc)).encode("utf-8")
    check_outcome(importer, data)


def _fuzz_test(importer: str):
    @FUZZ
    @given(data=mutated_files(importer))
    def test(data):
        check_outcome(importer, data)

    test.__name__ = f"test_fuzz_{importer}"
    return test


for _name in IMPORTERS:
    globals()[f"test_fuzz_{_name}"] = _fuzz_test(_name)


# --- what the fuzzer found, kept as plain regression tests ------------------------------------------

def _native_lines() -> list[dict[str, Any]]:
    return _native_doc()


def _native_bytes(records: list[dict[str, Any]]) -> bytes:
    return "\n".join(json.dumps(r) for r in records).encode("utf-8")


@pytest.mark.parametrize("field, value, problem", [
    ("meta", True, "'meta': expected an object or null, got true/false"),  # saved again: TypeError in dict(meta)
    ("text", None, "'text' must not be null"),  # was a Turn with text None
    ("id", ["x"], "'id': expected a string, got a list"),
    ("timestamp", 5, "'timestamp': expected a string or null, got an integer"),
])
def test_native_turn_with_a_wrong_type_is_a_format_error(tmp_path, field, value, problem):
    records = _native_lines()
    n = next(i for i, r in enumerate(records) if r.get("type") == "turn")
    records[n][field] = value
    path = tmp_path / "c.jsonl"
    path.write_bytes(_native_bytes(records))
    with pytest.raises(CorpusFormatError) as err:
        load(path)
    assert str(err.value) == f"{path}: line {n + 1}: {problem}"


def test_native_repeated_turn_id_is_a_format_error(tmp_path):
    records = _native_lines()
    n = next(i for i, r in enumerate(records) if r.get("type") == "turn")
    records.insert(n + 1, dict(records[n]))
    path = tmp_path / "c.jsonl"
    path.write_bytes(_native_bytes(records))
    with pytest.raises(CorpusFormatError, match=rf"line {n + 2}: turn id '[^']+' repeats line {n + 1}"):
        load(path)
