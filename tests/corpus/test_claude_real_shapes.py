"""Older Claude exports: messages out of order, regenerations flattened, attachments with text."""

import json
from pathlib import Path

import pytest

from lyra_lab.corpus import CorpusFormatError, load

FLAT = Path(__file__).parents[1] / "fixtures" / "corpus" / "claude" / "flattened.json"


def test_messages_are_put_in_time_order_and_the_move_counted():
    (session,) = load(FLAT).conversations[0].sessions
    ids = [t.id for t in session.turns if "part" not in t.meta]
    assert ids == ["h1-0001", "a1-0001", "a1-0002", "h2-0002", "a2-0003", "h3-0003", "h3-0004", "a3-0005"]
    assert session.meta["reordered"] == 4
    stamps = [t.timestamp for t in session.turns]
    assert stamps == sorted(stamps)


def test_flattened_regenerations_and_edits_are_marked_not_merged():
    (session,) = load(FLAT).conversations[0].sessions
    meta = {t.id: t.meta for t in session.turns}
    assert meta["a1-0002"]["regeneration_of"] == "a1-0001" and meta["a1-0001"]["regenerated"] is True
    assert meta["h3-0004"]["regeneration_of"] == "h3-0003" and meta["h3-0003"]["regenerated"] is True
    assert "regeneration_of" not in meta["h2-0002"]  # a new question 9 minutes later
    assert session.meta["regenerations"] == 2


def test_tie_keeps_the_question_before_its_answer(tmp_path):
    doc = json.loads(FLAT.read_text(encoding="utf-8"))
    msgs = doc[0]["chat_messages"]
    msgs[:] = [m for m in msgs if m["uuid"] in ("h2-0002", "a2-0003")][::-1]
    for m in msgs:
        m["created_at"] = "2023-06-01T09:10:00Z"
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    (session,) = load(path).conversations[0].sessions
    assert [t.id for t in session.turns] == ["h2-0002", "a2-0003"]


def test_attachment_text_is_a_turn_and_can_be_left_out():
    (session,) = load(FLAT).conversations[0].sessions
    (part,) = [t for t in session.turns if t.meta.get("part") == "attachment"]
    assert part.id == "h1-0001:attachment:0" and part.role == "user"
    assert part.text == "[attachment: receipts.csv]\ndate,amount\n2023-01-05,120"
    (lean,) = load(FLAT, include_attachments=False).conversations[0].sessions
    assert not [t for t in lean.turns if t.meta.get("part")]
    assert lean.turns[0].meta["attachments"] == ["receipts.csv", "desk.jpg"]  # names stay


def test_thinking_blocks_stay_out_of_the_answer():
    corpus = load(FLAT)
    assert not [t for t in corpus.turns() if "PRIVATE" in t.text]


@pytest.mark.parametrize("value", ["receipts.csv", {"file_name": "x"}, 3])
def test_attachments_not_a_list_is_a_format_error(tmp_path, value):
    doc = json.loads(FLAT.read_text(encoding="utf-8"))
    doc[0]["chat_messages"][1]["attachments"] = value
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(CorpusFormatError) as err:
        load(path)
    assert str(err.value).startswith(f"{path}: $[0].chat_messages[1].attachments: expected a list")
