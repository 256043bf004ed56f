import json
from pathlib import Path

import pytest

from lyra_lab.cli import main
from lyra_lab.corpus import load

FIXTURES = Path(__file__).parents[1] / "fixtures" / "corpus"


def test_import_prints_a_summary_table(capsys):
    assert main(["import", str(FIXTURES / "locomo_mini.json")]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    sha = load(FIXTURES / "locomo_mini.json").sha256
    assert lines[0] == f"corpus         locomo_mini  (locomo, sha256 {sha[:12]}…)"
    assert "conversations  2" in out
    assert "sessions       4" in out
    assert "turns          8  (user 5 · assistant 3)" in out
    assert "probes         4" in out
    assert "date span      2023-05-08 → 2024-01-01" in out
    rows = [ln.split() for ln in lines if ln.startswith("conv-")]
    assert rows == [["conv-1", "3", "6", "4", "2023-05-08", "2023-08-02"],
                    ["conv-2", "1", "2", "0", "2024-01-01", "2024-01-01"]]


def test_import_json_prints_corpus_stats(capsys):
    path = FIXTURES / "messages.jsonl"
    assert main(["import", str(path), "--json", "--probes", str(FIXTURES / "probes.jsonl")]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats == load(path, probes=FIXTURES / "probes.jsonl").stats()
    assert (stats["format"], stats["turns"], stats["probes"]) == ("jsonl", 4, 3)


def test_import_out_saves_a_native_corpus(tmp_path, capsys):
    out = tmp_path / "c.jsonl"
    assert main(["import", str(FIXTURES / "claude" / "conversations.json"), "--name", "me", "--out", str(out)]) == 0
    assert f"saved to {out}" in capsys.readouterr().out
    assert load(out) == load(FIXTURES / "claude" / "conversations.json", name="me")


@pytest.mark.parametrize("content", [b'[{"sample_id": 1', b"caf\xe9", b'[{"foo": 1}]'])
def test_bad_input_is_one_line_on_stderr_and_exit_2(tmp_path, capsys, content):
    path = tmp_path / "broken.json"
    path.write_bytes(content)
    assert main(["import", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err_lines = captured.err.strip().splitlines()
    assert len(err_lines) == 1 and str(path) in err_lines[0]


def test_missing_file_and_bad_probes_exit_2(tmp_path, capsys):
    missing = tmp_path / "nope.json"
    assert main(["import", str(missing)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(missing) in err[0]
    probes = tmp_path / "p.jsonl"
    probes.write_text('{"id": "x", "question": "q", "answer": "a", "evidence": ["no-such-turn"]}\n', encoding="utf-8")
    assert main(["import", str(FIXTURES / "messages.jsonl"), "--probes", str(probes)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{probes}: line 1:" in err[0] and "'no-such-turn'" in err[0]


def test_forced_format(capsys):
    assert main(["import", str(FIXTURES / "messages.jsonl"), "--format", "jsonl", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "jsonl"
    # argparse rejects an unknown format before anything is read
    assert main(["import", str(FIXTURES / "messages.jsonl"), "--format", "csv"]) == 2
    assert "invalid choice: 'csv'" in capsys.readouterr().err


def test_import_reports_what_was_skipped_and_mended(capsys):
    assert main(["import", str(FIXTURES / "chatgpt" / "conversations.json")]) == 0
    out = " ".join(capsys.readouterr().out.split("\n" + " " * 15))  # the value's lines, wrapped under it
    assert ("skipped        empty chats 1 · hidden 1 · non_text 1 · system 1 · tool 2 · "
            "edited-away branch nodes 2") in out
    assert main(["import", str(FIXTURES / "locomo_mini.json")]) == 0
    out = capsys.readouterr().out
    assert "evidence       2 probes with ids mended from the source, 1 ids dropped (they name no turn)" in out


@pytest.mark.parametrize("name, with_parts, parts", [
    ("claude/conversations.json", 5, ["m3-cc:attachment:0"]),  # one attachment's text
    ("chatgpt/branched.json", 10, ["b4-6c31", "b8-6c35"]),  # two canvas documents
])
def test_no_attachments_leaves_out_canvas_and_attachment_turns(tmp_path, capsys, name, with_parts, parts):
    path = FIXTURES / name
    kept, left_out = tmp_path / "kept.jsonl", tmp_path / "left_out.jsonl"
    assert main(["import", str(path), "--out", str(kept)]) == 0
    assert main(["import", str(path), "--no-attachments", "--out", str(left_out)]) == 0
    out = capsys.readouterr().out
    assert f"turns          {with_parts - len(parts)}  " in out.split("saved to")[1]  # the second summary
    assert [t.id for t in load(kept).turns() if t.meta.get("part")] == parts
    assert load(left_out) == load(path, include_attachments=False)
    assert [t.id for t in load(left_out).turns() if t.meta.get("part")] == []
    assert len(list(load(left_out).turns())) == with_parts - len(parts)


def test_import_says_why_there_are_more_turns_than_messages(capsys):
    assert main(["import", str(FIXTURES / "claude" / "conversations.json")]) == 0
    turns = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("turns "))
    assert turns.endswith("; of them 1 attachment's text, a turn each")  # 4 messages, 5 turns
    assert main(["import", str(FIXTURES / "messages.jsonl")]) == 0
    assert "of them" not in capsys.readouterr().out  # plain messages: nothing to explain
