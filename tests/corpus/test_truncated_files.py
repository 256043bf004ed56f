"""A file cut off part-way (a failed download or copy) is reported as truncated, for every format."""

from pathlib import Path

import pytest

from lyra_lab.corpus import CorpusFormatError, load, load_probes

FIXTURES = Path(__file__).parents[1] / "fixtures" / "corpus"
JSON_FILES = ["chatgpt/conversations.json", "chatgpt/single_conversation.json", "claude/conversations.json",
              "locomo_mini.json", "longmemeval_mini.json"]


@pytest.mark.parametrize("name", JSON_FILES)
@pytest.mark.parametrize("fraction", [0.13, 0.5, 0.77, 0.999])
def test_cut_json_documents_say_truncated(tmp_path, name, fraction):
    data = (FIXTURES / name).read_bytes()
    cut = data[: int(len(data) * fraction)]
    path = tmp_path / "cut.json"
    path.write_bytes(cut)
    with pytest.raises(CorpusFormatError) as err:
        load(path)
    assert "truncated" in str(err.value), str(err.value)


def test_a_cut_inside_a_utf8_character_says_truncated(tmp_path):
    path = tmp_path / "cut.json"
    path.write_bytes('[{"text": "Belé'.encode("utf-8")[:-1])
    with pytest.raises(CorpusFormatError, match=r"cut\.json: line 1: truncated file \(it ends inside a UTF-8"):
        load(path)


@pytest.mark.parametrize("text", ['[{"a": "unfinished str', '[{"a": tru', '[{"a": 12.', '[{"a": "x\\u00',
                                  '[{"a"', '[\n  {\n'])
def test_cuts_inside_a_token_say_truncated(tmp_path, text):
    path = tmp_path / "cut.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="truncated JSON"):
        load(path)


def test_broken_json_in_the_middle_is_not_called_truncated(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[{"a": nope}, {"b": 2}]', encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"not valid JSON \(Expecting value\)"):
        load(path)


@pytest.mark.parametrize("name, reader", [("messages.jsonl", load), ("probes.jsonl", load_probes)])
def test_cut_jsonl_last_line_says_truncated(tmp_path, name, reader):
    lines = (FIXTURES / name).read_text(encoding="utf-8").rstrip("\n").split("\n")
    path = tmp_path / name
    path.write_text("\n".join([*lines[:-1], lines[-1][: len(lines[-1]) // 2]]), encoding="utf-8")
    with pytest.raises(CorpusFormatError) as err:
        reader(path)
    assert str(err.value).startswith(f"{path}: line {len(lines)}: not valid JSON (truncated, ")


def test_cut_native_file_says_truncated(tmp_path):
    saved = load(FIXTURES / "locomo_mini.json").save(tmp_path / "c.jsonl")
    text = saved.read_text(encoding="utf-8")
    saved.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"line \d+: not valid JSON \(truncated, "):
        load(saved)
