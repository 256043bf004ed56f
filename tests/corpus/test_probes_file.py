from datetime import datetime, timezone
from pathlib import Path

import pytest

from lyra_lab.corpus import CorpusFormatError, load, load_probes

FIXTURES = Path(__file__).parents[1] / "fixtures" / "corpus"
PROBES = FIXTURES / "probes.jsonl"
GOOD = '{"id": "p0", "question": "q", "answer": "a", "evidence": ["m1"]}'


@pytest.fixture(scope="module")
def corpus():
    return load(FIXTURES / "messages.jsonl")


def test_probes_are_read_and_conversations_inferred(corpus):
    p1, p2, p3 = load_probes(PROBES, corpus)
    assert (p1.id, p1.conversation_id, p1.evidence, p1.answer) == ("p1", "messages", ("m1",), "hi")
    assert (p2.conversation_id, p2.answer, p2.category) == ("other", "3", "single-hop")
    assert p2.asked_at == datetime(2024, 3, 1, tzinfo=timezone.utc)
    assert p2.meta == {"note": "x"}
    assert (p3.conversation_id, p3.evidence, p3.abstention) == ("other", (), True)


def test_load_with_probes_appends_them(corpus):
    combined = load(FIXTURES / "messages.jsonl", probes=PROBES)
    assert [p.id for p in combined.probes] == ["p1", "p2", "p3"]
    assert combined.conversations == corpus.conversations


def test_probe_ids_clashing_with_the_corpus_own_probes_are_an_error(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "q1", "question": "again?", "answer": "Rex", "conversation_id": "q1"}\n', encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="probe id 'q1' is already one of the corpus's own probes"):
        load(FIXTURES / "longmemeval_mini.json", probes=path)


def test_without_corpus_nothing_is_checked_and_a_missing_conversation_is_left_unresolved(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": 7, "question": "q", "answer": "a", "conversation_id": "c", "evidence": ["zz"]}\n',
                    encoding="utf-8")
    (probe,) = load_probes(path)
    assert (probe.id, probe.conversation_id, probe.evidence) == ("7", "c", ("zz",))  # unchecked without a corpus
    (probe,) = load_probes(PROBES)[:1]  # the README's format: no conversation_id
    assert probe.conversation_id == ""


def test_probes_read_alone_are_resolved_when_joined_with_a_corpus(corpus):
    alone = load_probes(PROBES)
    assert [p.conversation_id for p in alone] == ["", "", "other"]
    joined = load(FIXTURES / "messages.jsonl", probes=alone)
    assert [(p.id, p.conversation_id) for p in joined.probes] == [("p1", "messages"), ("p2", "other"),
                                                                  ("p3", "other")]
    assert joined.probes == load(FIXTURES / "messages.jsonl", probes=PROBES).probes


def test_joining_checks_evidence_like_reading_with_a_corpus(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "p9", "question": "q", "answer": "a", "evidence": ["nope"]}\n', encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"probes: probe 'p9': evidence id 'nope' matches no turn"):
        load(FIXTURES / "messages.jsonl", probes=load_probes(path))


@pytest.mark.parametrize("line, problem", [
    ('{"id": "p9", "question": "q", "answer": "a", "evidence": ["m1", "nope"]}',
     "probe 'p9': evidence id 'nope' matches no turn in the corpus"),
    ('{"id": "p9", "question": "q", "answer": "a", "evidence": ["m1"], "conversation_id": "other"}',
     "probe 'p9': evidence id 'm1' matches no turn in conversation 'other'"),
    ('{"id": "p9", "question": "q", "answer": "a", "conversation_id": "ghost"}',
     "conversation_id 'ghost' is not in the corpus"),
    ('{"id": "p9", "question": "q", "answer": "a", "evidence": ["m1", "s9:1"]}',
     "evidence ids span several conversations"),
    ('{"id": "p9", "question": "q", "answer": "a"}', "has no evidence and no 'conversation_id'"),
    ('{"id": "p0", "question": "q", "answer": "a", "evidence": ["m1"]}', "probe id 'p0' repeats line 1"),
    ('{"id": "p9", "answer": "a", "evidence": ["m1"]}', "'question': missing required field"),
    ('{"id": "p9", "question": "q", "answer": "a", "evidence": "m1"}', "'evidence': expected a list"),
    ('{"id": "p9", "question": "q", "answer": "a", "evidence": [3]}', "must list turn ids as strings"),
    ('{"id": "p9", "question": "q", "answer": "a", "evidence": ["m1"], "asked_at": "later"}',
     "'asked_at': not an ISO 8601 timestamp"),
    ('{"id": "p9", "question": "q", "answer": "a", "evidence": ["m1"], "adversarial": "yes"}',
     "'adversarial': expected true/false"),
    ('{"id": "p9", "question": "q", "answer": ', "not valid JSON"),
])
def test_bad_probe_line_names_file_and_line(tmp_path, corpus, line, problem):
    path = tmp_path / "probes.jsonl"
    path.write_text(GOOD + "\n\n" + line + "\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError) as err:
        load_probes(path, corpus)
    assert str(err.value).startswith(f"{path}: line 3: ")
    assert problem in str(err.value)


def test_ambiguous_evidence_needs_a_conversation_id(tmp_path):
    messages = tmp_path / "m.jsonl"
    messages.write_text('{"conversation_id": "a", "session_id": "s", "role": "user", "content": "x", "id": "t"}\n'
                        '{"conversation_id": "b", "session_id": "s", "role": "user", "content": "x", "id": "t"}\n',
                        encoding="utf-8")
    corpus = load(messages)
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "p", "question": "q", "answer": "a", "evidence": ["t"]}\n', encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="evidence ids occur in conversations a, b; set 'conversation_id'"):
        load_probes(path, corpus)
    path.write_text('{"id": "p", "question": "q", "answer": "a", "evidence": ["t"], "conversation_id": "b"}\n',
                    encoding="utf-8")
    assert load_probes(path, corpus)[0].conversation_id == "b"


def test_empty_and_non_utf8_probe_files(tmp_path, corpus):
    path = tmp_path / "p.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"p\.jsonl: no probes"):
        load_probes(path, corpus)
    path.write_bytes(GOOD.encode() + b"\n" + '{"id": "p2", "question": "caf\u00e9"}'.encode("latin-1"))
    with pytest.raises(CorpusFormatError, match=r"p\.jsonl: line 2: not UTF-8 text \(byte 0xe9"):
        load_probes(path, corpus)


def test_loading_a_probes_file_as_a_corpus_says_what_it_is():
    with pytest.raises(CorpusFormatError, match="this is a probes file, not a corpus"):
        load(PROBES)
