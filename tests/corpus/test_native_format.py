from datetime import datetime, timedelta, timezone

import pytest

from lyra_lab.corpus import Conversation, Corpus, CorpusFormatError, Probe, Session, Turn
from lyra_lab.corpus._native import parse

T0 = datetime(2024, 3, 1, 12, tzinfo=timezone.utc)


def sample_corpus() -> Corpus:
    turns = tuple(
        Turn(f"m{i}", "conv", "s1", "user" if i % 2 == 0 else "assistant", f"line {i}\nünïcode ✓",
             T0 + timedelta(minutes=i), speaker="Ann" if i % 2 == 0 else None, meta={"src": i})
        for i in range(4)
    )
    session = Session("s1", "conv", turns, title="first", started_at=T0, gist="a gist", meta={"k": [1, 2]})
    probe = Probe("p1", "conv", "what?", "line 2", ("m2",), category=4, asked_at=T0 + timedelta(days=1),
                  adversarial=True, meta={"note": "x"})
    return Corpus("demo", (Conversation("conv", (session,), title="t"),), (probe,), source="/x.json",
                  sha256="ab" * 32, format="chatgpt")


def test_round_trip_is_lossless(tmp_path):
    corpus = sample_corpus()
    path = corpus.save(tmp_path / "c.jsonl")
    with open(path, encoding="utf-8") as fh:
        assert parse(path, fh) == corpus


def test_broken_line_names_file_and_line(tmp_path):
    path = sample_corpus().save(tmp_path / "c.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3][:20]
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"c\.jsonl: line 4: not valid JSON"):
        parse(path, path.read_text(encoding="utf-8").split("\n"))


def test_turn_without_session_and_naive_time(tmp_path):
    header = '{"lyra_lab_corpus": 1, "name": "x"}'
    conv = '{"type": "conversation", "id": "c"}'
    orphan = '{"type": "turn", "id": "t", "conversation_id": "c", "session_id": "s", "role": "user", "text": "x"}'
    with pytest.raises(CorpusFormatError, match="line 3: turn before its session 's'"):
        parse("f.jsonl", [header, conv, orphan])
    sess = '{"type": "session", "id": "s", "conversation_id": "c", "started_at": "2024-01-01T00:00:00"}'
    with pytest.raises(CorpusFormatError, match="line 3: .*no UTC offset"):
        parse("f.jsonl", [header, conv, sess])
    with pytest.raises(CorpusFormatError, match="line 1: empty file"):
        parse("f.jsonl", [])
