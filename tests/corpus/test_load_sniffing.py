from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lyra_lab._registry import ConfigError
from lyra_lab.corpus import FORMATS, Conversation, Corpus, CorpusFormatError, Probe, Session, Turn, load

FIXTURES = Path(__file__).parents[1] / "fixtures" / "corpus"
CASES = [
    ("chatgpt/conversations.json", "chatgpt"),
    ("claude/conversations.json", "claude"),
    ("locomo_mini.json", "locomo"),
    ("longmemeval_mini.json", "longmemeval"),
    ("messages.jsonl", "jsonl"),
]


def test_formats_lists_every_importer():
    assert FORMATS == ("native", "chatgpt", "claude", "locomo", "longmemeval", "jsonl", "lyra_db")


@pytest.mark.parametrize("name, fmt", CASES)
def test_format_is_sniffed_from_content_not_name(tmp_path, name, fmt):
    renamed = tmp_path / "export.dat"  # no telling extension
    renamed.write_bytes((FIXTURES / name).read_bytes())
    corpus = load(renamed)
    assert corpus.format == fmt
    assert corpus.source == str(renamed)
    assert corpus.conversations == load(FIXTURES / name, name="export").conversations


@pytest.mark.parametrize("name, fmt", CASES)
def test_native_round_trip_is_equal(tmp_path, name, fmt):
    corpus = load(FIXTURES / name)
    saved = corpus.save(tmp_path / "corpus.jsonl")
    again = load(saved)
    assert again == corpus  # provenance (source, sha256, format) included
    assert again.format == fmt and load(saved, format="native") == corpus


def test_utf8_bom_is_accepted(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + (FIXTURES / "locomo_mini.json").read_bytes())
    assert load(path).format == "locomo"


def test_unknown_format_name_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown corpus format 'csv'; known: auto, native, chatgpt"):
        load(FIXTURES / "messages.jsonl", format="csv")


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "nope.json")
    (tmp_path / "export").mkdir()
    (tmp_path / "export" / "conversations.json").write_text("[]", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"export: is a directory, not a file; give its conversations\.json"):
        load(tmp_path / "export")


@pytest.mark.parametrize("content, where, problem", [
    (b"", "", "empty file"),
    (b"  \n\n", "", "empty file"),
    (b'[{"sample_id": "conv-1", "conversation": {"speaker_a": "A",', "line 1 column 60", "truncated JSON"),
    (b'[{"a": 1}\n {"b": 2}]', "line 2 column 2", "not valid JSON (Expecting ',' delimiter)"),
    (b'[{"role": "user", "content": "caf\xe9"}]', "line 1", "not UTF-8 text (byte 0xe9 at offset 33)"),
    (b"[]", "$", "empty JSON list: nothing to import"),
    (b'[{"foo": 1, "bar": 2}]', "", "cannot tell the format of a JSON list whose first item has keys ['bar', 'foo']"),
    (b'{"foo": 1}\n{"foo": 2}\n', "", "cannot tell the format of JSON with keys ['foo']"),
    (b"# Notes\nhello\n", "line 1", "cannot tell the format: not JSON, JSONL, SQLite or a zip"),
    (b"PK\x03\x04garbage", "", "broken zip archive"),
])
def test_bad_input_names_file_place_and_problem(tmp_path, content, where, problem):
    path = tmp_path / "input.json"
    path.write_bytes(content)
    with pytest.raises(CorpusFormatError) as err:
        load(path)
    prefix = f"{path}: {where}: " if where else f"{path}: "
    assert str(err.value).startswith(prefix + problem), str(err.value)


def test_unknown_format_error_lists_known_formats(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('[{"foo": 1}]', encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="known formats: native, chatgpt, claude, locomo, longmemeval, "
                                                "jsonl, lyra_db"):
        load(path)


def test_forced_format_on_the_wrong_file_fails_with_a_path(tmp_path):
    with pytest.raises(CorpusFormatError, match=r"locomo_mini\.json: \$\[0\]\.uuid: missing required field"):
        load(FIXTURES / "locomo_mini.json", format="claude")
    with pytest.raises(CorpusFormatError, match=r"locomo_mini\.json: line 1: not a lyra-lab corpus \(no lyra_lab_corpus header\)"):
        load(FIXTURES / "locomo_mini.json", format="native")


def test_native_name_override_keeps_provenance(tmp_path):
    corpus = load(FIXTURES / "locomo_mini.json")
    again = load(corpus.save(tmp_path / "c.jsonl"), name="renamed")
    assert again.name == "renamed"
    assert (again.source, again.sha256, again.format) == (corpus.source, corpus.sha256, corpus.format)


# --- property: any corpus survives save → load unchanged -------------------------------------------

T0 = datetime(2020, 1, 1, tzinfo=timezone.utc)
chars = st.characters(blacklist_categories=("Cs",))
ids = st.text(chars, min_size=1, max_size=6)
# whatever users type, including line separators that str.splitlines() would split on
texts = st.text(chars, max_size=20) | st.sampled_from(
    ["a\u2028b", "x\x85y", "p\u2029q", "tab\tnew\nline\r\n", "\x1c\x1d\x1e"])
stamps = st.none() | st.integers(0, 10**9).map(lambda s: T0 + timedelta(seconds=s, microseconds=s % 7))
scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | texts
json_values = scalars | st.lists(scalars, max_size=2) | st.dictionaries(ids, scalars, max_size=2)
metas = st.dictionaries(ids, json_values, max_size=2)


@st.composite
def corpora(draw):
    conversations = []
    for cid in draw(st.lists(ids, min_size=1, max_size=2, unique=True)):
        sessions = []
        for sid in draw(st.lists(ids, min_size=1, max_size=2, unique=True)):
            turns = tuple(Turn(f"{sid}/{k}", cid, sid, draw(st.sampled_from(["user", "assistant"])), draw(texts),
                               draw(stamps), draw(st.none() | texts), draw(metas))
                          for k in range(draw(st.integers(0, 3))))
            sessions.append(Session(sid, cid, turns, draw(st.none() | texts), draw(stamps), draw(st.none() | texts),
                                    draw(metas)))
        conversations.append(Conversation(cid, tuple(sessions), draw(st.none() | texts), draw(metas)))
    probes = tuple(Probe(f"p{n}", conversations[0].id, draw(texts), draw(texts), tuple(draw(st.lists(ids, max_size=2))),
                         draw(st.none() | st.integers(1, 5) | texts), draw(stamps), draw(st.booleans()),
                         draw(st.booleans()), draw(metas))
                   for n in range(draw(st.integers(0, 3))))
    return Corpus(draw(ids), tuple(conversations), probes, draw(st.none() | texts), draw(st.none() | ids),
                  draw(st.none() | st.sampled_from(FORMATS)))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(corpus=corpora())
def test_any_corpus_round_trips_through_load(tmp_path, corpus):
    path = corpus.save(tmp_path / "prop.jsonl")
    assert load(path) == corpus
