from datetime import datetime, timezone
from pathlib import Path

import pytest

from lyra_lab.corpus import CorpusFormatError, load

FIXTURE = Path(__file__).parents[1] / "fixtures" / "corpus" / "messages.jsonl"


def utc(*args):
    return datetime(*args, tzinfo=timezone.utc)


def test_messages_grouped_by_conversation_and_session():
    corpus = load(FIXTURE)
    assert corpus.format == "jsonl"
    mine, other = corpus.conversations
    assert (mine.id, other.id) == ("messages", "other")  # default id is the file stem
    assert [s.id for s in mine.sessions] == ["s1", "s2"]
    s1, s2 = mine.sessions
    assert [(t.id, t.role, t.text, t.timestamp, t.speaker) for t in s1.turns] == [
        ("m1", "user", "hi", utc(2024, 2, 1, 10), None),
        ("s1:2", "assistant", "hello", utc(2024, 2, 1, 10, 0, 5), "Lyra"),  # epoch seconds; alias "ai"
    ]
    assert s1.started_at == utc(2024, 2, 1, 10)
    assert s2.turns[0].timestamp == utc(2024, 2, 2, 7)  # +02:00 converted to UTC
    (turn,) = other.sessions[0].turns
    assert (turn.id, turn.role, turn.timestamp, turn.meta) == ("s9:1", "user", None, {"mood": "happy"})


@pytest.mark.parametrize("line, problem", [
    ('{"session_id": "s", "role": "system", "content": "x"}', "unknown role 'system'"),
    ('{"session_id": "s", "role": "user"}', "missing required field 'content'"),
    ('{"role": "user", "content": "x"}', "missing required field 'session_id'"),
    ('{"session_id": "s", "role": "user", "content": ["x"]}', "'content' must be a string, got a list"),
    ('{"session_id": "s", "role": "user", "content": "x", "timestamp": "soon"}', "'timestamp': not an ISO 8601"),
    ('{"session_id": "s", "role": "user", "content": "x", "id": "m1"}', "id 'm1' repeats line 1"),
    ('{"session_id": "s", "role": "user", "content": "x"', "not valid JSON"),
    ('["session_id", "s"]', "expected a JSON object, got a list"),
])
def test_bad_line_is_named(tmp_path, line, problem):
    path = tmp_path / "chat.jsonl"
    good = '{"session_id": "s", "role": "user", "content": "x", "id": "m1"}'
    path.write_text(good + "\n" + good.replace("m1", "m0") + "\n\n" + line + "\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError) as err:
        load(path, format="jsonl")
    assert str(err.value).startswith(f"{path}: line 4: ")
    assert problem in str(err.value)


def test_same_id_in_different_conversations_is_fine(tmp_path):
    path = tmp_path / "chat.jsonl"
    path.write_text('{"conversation_id": "a", "session_id": "s", "role": "user", "content": "x", "id": 1}\n'
                    '{"conversation_id": "b", "session_id": "s", "role": "bot", "content": "y", "id": 1}\n',
                    encoding="utf-8")
    corpus = load(path)
    assert [(t.conversation_id, t.id, t.role) for t in corpus.turns()] == [("a", "1", "user"), ("b", "1", "assistant")]
