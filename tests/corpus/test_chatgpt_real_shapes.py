"""ChatGPT exports as real ones come: branched chats, rich markup, canvases, one conversation alone."""

import json
from pathlib import Path

from lyra_lab.corpus import load

DIR = Path(__file__).parents[1] / "fixtures" / "corpus" / "chatgpt"
BRANCHED = DIR / "branched.json"


def test_branch_in_new_chat_imports_both_and_shared_nodes_once():
    corpus = load(BRANCHED)
    (conv,) = corpus.conversations
    original, branch = conv.sessions  # oldest first
    assert (original.id, branch.id) == ("conv-a-1f2e", "conv-b-3c4d")
    assert [t.id for t in original.turns] == ["n1-5a20", "n2-5a21", "n3-5a22", "n4-5a23"]
    assert [t.id for t in branch.turns][:2] == ["b3-6c30", "b4-6c31"]
    ids = [t.id for t in corpus.turns()]
    assert len(ids) == len(set(ids))
    assert branch.meta["branched_from"] == {"conversation_id": "conv-a-1f2e", "node_id": "n2-5a21",
                                            "shared_nodes_skipped": 2}
    assert "branched_from" not in original.meta


def test_branch_without_export_hint_names_the_owner_of_the_shared_nodes(tmp_path):
    doc = json.loads(BRANCHED.read_text(encoding="utf-8"))
    del doc[0]["metadata"]
    doc.reverse()  # file order must not matter: the older conversation owns the shared nodes
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    branch = load(path).conversations[0].sessions[1]
    assert branch.meta["branched_from"]["conversation_id"] == "conv-a-1f2e"
    assert branch.meta["branched_from"]["shared_nodes_skipped"] == 2


def test_citations_dropped_entities_named_image_groups_gone():
    original = load(BRANCHED).conversations[0].sessions[0]
    texts = {t.id: t.text for t in original.turns}
    assert texts["n2-5a21"] == "Start with tomatoes. Ask Monty Don for tips."
    assert texts["n4-5a23"] == "Plant them in May, after the last frost."
    assert not any("\ue200" <= ch <= "\ue2ff" or ch == "【" for t in texts.values() for ch in t)


def test_canvas_documents_are_turns_marked_as_such():
    branch = load(BRANCHED).conversations[0].sessions[1]
    canvases = [t for t in branch.turns if t.meta.get("part") == "canvas"]
    assert [(t.id, t.role) for t in canvases] == [("b4-6c31", "assistant"), ("b8-6c35", "assistant")]
    assert canvases[0].text == "[canvas: garden_plan]\n# Garden plan\nBed 1: tomatoes, basil."
    assert canvases[0].meta["canvas_name"] == "garden_plan"
    assert canvases[1].text.startswith("[canvas: garden_plan]\n") and "Bed 2: carrots." in canvases[1].text
    assert canvases[1].meta["canvas_name"] == "garden_plan"  # the update edits the document written before
    assert branch.meta["skipped"]["tool"] == 1  # the tool's "Successfully created ..." reply


def test_canvas_left_out_on_request():
    branch = load(BRANCHED, include_attachments=False).conversations[0].sessions[1]
    assert not [t for t in branch.turns if t.meta.get("part")]
    assert branch.meta["skipped"]["canvas"] == 2


def test_a_single_conversation_object_is_a_one_chat_export():
    corpus = load(DIR / "single_conversation.json")
    assert corpus.format == "chatgpt"
    (session,) = corpus.conversations[0].sessions
    assert (session.id, session.title, [t.id for t in session.turns]) == ("solo-9e8d", "Haiku", ["s1-0b", "s2-0c"])
