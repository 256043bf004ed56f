import copy
import hashlib
import json
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from lyra_lab.corpus import CorpusFormatError, load

FIXTURE = Path(__file__).parents[1] / "fixtures" / "corpus" / "chatgpt" / "conversations.json"


def utc(*args):
    return datetime(*args, tzinfo=timezone.utc)


def fixture_doc():
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def write(tmp_path, doc, name="conversations.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_visible_thread_only_with_exact_ids_texts_and_times():
    corpus = load(FIXTURE)
    assert corpus.format == "chatgpt"
    (conv,) = corpus.conversations
    assert conv.id == "conversations"  # the file stem
    assert conv.meta == {"source_format": "chatgpt", "empty_chats": 1}
    # the chat with only a system message has nothing visible and is not imported;
    # the others are ordered oldest first although the export lists newest first
    assert [s.id for s in conv.sessions] == ["5c0d-conv-b", "6a1f0c2e-conv-a"]
    older, trip = conv.sessions
    assert trip.title == "Lisbon trip"
    assert trip.started_at == utc(2023, 11, 14, 22, 13, 20)
    assert [(t.id, t.role, t.text) for t in trip.turns] == [
        ("u1-4b2a", "user", "Plan a day in Lisbon."),
        ("a1-5c3d", "assistant", "Morning: tram 28. Afternoon: Belém."),
        ("u2-6d4e", "user", "Draw this tram as a poster."),
        ("a2-9f3c", "assistant", "Here is your tram poster.\n\nEnjoy Lisbon!"),
    ]
    assert [t.timestamp for t in trip.turns] == [
        utc(2023, 11, 14, 22, 13, 30, 500000), utc(2023, 11, 14, 22, 13, 40),
        utc(2023, 11, 14, 22, 14, 0), utc(2023, 11, 14, 22, 14, 15, 250000)]
    assert all(t.conversation_id == "conversations" and t.session_id == trip.id for t in trip.turns)
    assert trip.turns[1].meta == {"model": "gpt-4o"}
    assert [(t.id, t.text, t.timestamp) for t in older.turns] == [
        ("b1", "hello", utc(2023, 7, 22, 4, 26, 41)), ("b2", "hi there", None)]


def test_edited_and_regenerated_branches_are_pruned_and_skips_counted():
    trip = load(FIXTURE).conversations[0].sessions[1]
    texts = " ".join(t.text for t in trip.turns)
    assert "OLD" not in texts and "EDITED-AWAY" not in texts
    assert trip.meta["pruned_nodes"] == 2
    # system prompt, hidden custom instructions, the tool call and tool output, the image part
    assert trip.meta["skipped"] == {"hidden": 1, "non_text": 1, "system": 1, "tool": 2}
    assert "I like trams" not in texts and "tram poster\"}" not in texts


def test_switching_current_node_follows_the_other_branch(tmp_path):
    doc = fixture_doc()
    doc[0]["current_node"] = "u2-old-88"
    trip = load(write(tmp_path, doc)).conversations[0].sessions[1]
    assert [t.id for t in trip.turns] == ["u1-4b2a", "a1-5c3d", "u2-old-88"]


def test_name_argument_sets_conversation_id():
    corpus = load(FIXTURE, name="alice")
    assert corpus.name == "alice"
    assert {t.conversation_id for t in corpus.turns()} == {"alice"}


def test_zip_export_reads_conversations_json_and_hashes_the_zip(tmp_path):
    archive = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("chat.html", "<html></html>")
        zf.writestr("conversations.json", FIXTURE.read_bytes())
    corpus = load(archive)
    plain = load(FIXTURE, name="chatgpt-export")
    assert corpus.format == "chatgpt"
    assert corpus.conversations == plain.conversations
    assert corpus.source == str(archive)
    assert corpus.sha256 == hashlib.sha256(archive.read_bytes()).hexdigest()


def test_zip_without_conversations_json_names_the_zip(tmp_path):
    archive = tmp_path / "other.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("notes.txt", "x")
    with pytest.raises(CorpusFormatError, match=r"other\.zip: zip archive has no conversations\.json.*notes\.txt"):
        load(archive)


def test_error_inside_zip_names_archive_member(tmp_path):
    doc = fixture_doc()
    del doc[0]["mapping"]["u1-4b2a"]["message"]["author"]["role"]
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("conversations.json", json.dumps(doc))
    with pytest.raises(CorpusFormatError) as err:
        load(archive)
    assert str(err.value).startswith(f"{archive}!conversations.json: ")


def test_parent_cycle_is_an_error_naming_the_link(tmp_path):
    doc = fixture_doc()
    doc[0]["mapping"]["u1-4b2a"]["parent"] = "a1-5c3d"  # a1's parent is u1: a loop
    path = write(tmp_path, doc)
    with pytest.raises(CorpusFormatError) as err:
        load(path)
    msg = str(err.value)
    # the walk meets u1 first (file order), so the link closing the loop is a1's parent
    assert msg.startswith(f"{path}: $[0].mapping[\"a1-5c3d\"].parent: parent cycle")
    assert "u1-4b2a → a1-5c3d → u1-4b2a" in msg


def test_dangling_parent_is_an_error(tmp_path):
    doc = fixture_doc()
    doc[2]["mapping"]["b1"]["parent"] = "ghost"
    with pytest.raises(CorpusFormatError, match=r'\$\[2\]\.mapping\.b1\.parent: points to node \'ghost\''):
        load(write(tmp_path, doc))


@pytest.mark.parametrize("mutate, where, problem", [
    (lambda d: d[0]["mapping"]["u1-4b2a"]["message"]["author"].pop("role"),
     '$[0].mapping["u1-4b2a"].message.author.role', "missing required field"),
    (lambda d: d[0]["mapping"]["u1-4b2a"]["message"]["author"].update(role="critic"),
     '$[0].mapping["u1-4b2a"].message.author.role', "unknown author role 'critic'"),
    (lambda d: d[2].pop("current_node"), "$[2].current_node", "missing required field"),
    (lambda d: d[2].update(mapping=[]), "$[2].mapping", "expected an object, got a list"),
    (lambda d: d[2]["mapping"]["b1"]["message"].update(create_time="yesterday"),
     "$[2].mapping.b1.message.create_time", "not an ISO 8601 timestamp"),
    (lambda d: d[2]["mapping"]["b1"]["message"]["content"].update(parts="hello"),
     "$[2].mapping.b1.message.content.parts", "expected a list"),
])
def test_wrong_schema_names_file_and_json_path(tmp_path, mutate, where, problem):
    doc = fixture_doc()
    mutate(doc)
    path = write(tmp_path, doc)
    with pytest.raises(CorpusFormatError) as err:
        load(path, format="chatgpt")
    assert str(err.value).startswith(f"{path}: {where}: ")
    assert problem in str(err.value)


def test_repeated_conversation_id_is_an_error(tmp_path):
    doc = fixture_doc()
    doc.append(copy.deepcopy(doc[2]))
    with pytest.raises(CorpusFormatError, match=r"\$\[3\]\.id: conversation id '5c0d-conv-b' repeats \$\[2\]"):
        load(write(tmp_path, doc))


def test_voice_transcriptions_are_text_and_audio_pointers_are_not(tmp_path):
    doc = fixture_doc()
    doc[2]["mapping"]["b1"]["message"]["content"] = {"content_type": "multimodal_text", "parts": [
        {"content_type": "audio_transcription", "text": "what's the weather", "direction": "in"},
        {"content_type": "audio_asset_pointer", "asset_pointer": "sediment://file_1"}]}
    older = load(write(tmp_path, doc)).conversations[0].sessions[0]
    assert older.turns[0].text == "what's the weather"
    assert older.meta["skipped"] == {"non_text": 1}


def test_parent_cycle_on_an_abandoned_branch_is_an_error_too(tmp_path):
    doc = fixture_doc()
    doc[0]["mapping"]["u2-old-88"]["parent"] = "u2-old-88"  # not on the visible thread
    with pytest.raises(CorpusFormatError, match=r'\$\[0\]\.mapping\["u2-old-88"\]\.parent: parent cycle'):
        load(write(tmp_path, doc))
