import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from lyra_lab.corpus import CorpusFormatError, load

FIXTURE = Path(__file__).parents[1] / "fixtures" / "corpus" / "claude" / "conversations.json"


def utc(*args):
    return datetime(*args, tzinfo=timezone.utc)


def write(tmp_path, doc):
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_chats_become_sessions_with_exact_turns():
    corpus = load(FIXTURE, name="bob")
    assert corpus.format == "claude"
    (conv,) = corpus.conversations
    assert conv.id == "bob"
    assert conv.meta["empty_chats"] == 1  # the chat with no messages
    assert [(s.id, s.title, s.started_at) for s in conv.sessions] == [
        ("c2-4e0b", None, utc(2024, 1, 1)),
        ("c1-3f9a", "Recipe ideas", utc(2024, 3, 5, 14, 22, 10, 123456)),
    ]
    recipes = conv.sessions[1]
    assert [(t.id, t.role, t.text, t.timestamp) for t in recipes.turns] == [
        ("m1-aa", "user", "Any pasta ideas?", utc(2024, 3, 5, 14, 22, 11)),
        # text blocks joined; tool use and tool results left out; the flat "text" loses to the blocks
        ("m2-bb", "assistant", "Try cacio e pepe.\n\nOr carbonara.", utc(2024, 3, 5, 14, 22, 20)),
        # an older message with only "text"; +01:00 converted to UTC
        ("m3-cc", "user", "Thanks! Here is my menu.", utc(2024, 3, 5, 14, 30)),
        # the attachment's extracted text is a turn of its own, right after its message
        ("m3-cc:attachment:0", "user", "[attachment: menu.pdf]\n...", utc(2024, 3, 5, 14, 30)),
    ]
    assert recipes.turns[2].meta == {"attachments": ["menu.pdf"]}
    assert recipes.turns[3].meta == {"part": "attachment", "file_name": "menu.pdf", "attached_to": "m3-cc"}
    # the assistant message with no text at all is skipped and counted
    assert [t.id for t in conv.sessions[0].turns] == ["m4-dd"]
    assert conv.sessions[0].meta == {"skipped": {"empty": 1}}


@pytest.mark.parametrize("mutate, where, problem", [
    (lambda d: d[0]["chat_messages"][1].update(sender="system"),
     "$[0].chat_messages[1].sender", "unknown sender 'system'"),
    (lambda d: d[0]["chat_messages"][0].pop("uuid"), "$[0].chat_messages[0].uuid", "missing required field"),
    (lambda d: d[1].pop("chat_messages"), "$[1].chat_messages", "missing required field"),
    (lambda d: d[0]["chat_messages"][0].update(created_at="5th of March"),
     "$[0].chat_messages[0].created_at", "not an ISO 8601 timestamp"),
    (lambda d: d[0]["chat_messages"][1]["content"].__setitem__(0, "plain"),
     "$[0].chat_messages[1].content[0]", "expected an object"),
])
def test_wrong_schema_names_file_and_json_path(tmp_path, mutate, where, problem):
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    mutate(doc)
    path = write(tmp_path, doc)
    with pytest.raises(CorpusFormatError) as err:
        load(path)
    assert str(err.value).startswith(f"{path}: {where}: ")
    assert problem in str(err.value)


def test_repeated_message_uuid_is_an_error(tmp_path):
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    doc[1]["chat_messages"][0]["uuid"] = "m1-aa"
    with pytest.raises(CorpusFormatError, match=r"\$\[1\]: uuid 'm1-aa' repeats one in \$\[0\]"):
        load(write(tmp_path, doc))
