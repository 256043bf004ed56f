import hashlib
import sqlite3
from datetime import datetime, timezone

import pytest

from lyra_lab.corpus import CorpusFormatError, load


def utc(*args):
    return datetime(*args, tzinfo=timezone.utc)


SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT, created_at TEXT);
CREATE TABLE exchanges (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, role TEXT, content TEXT,
                        embedding BLOB, created_at TEXT);
CREATE TABLE summaries (id INTEGER PRIMARY KEY, session_id TEXT, content TEXT, last_exchange_id INTEGER,
                        created_at TEXT);
"""


def make_db(path, extra_sql=""):
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    db.executemany("INSERT INTO sessions VALUES (?, ?, ?)", [
        ("later", "Weekend plans", "2024-05-02 09:00:00"),
        ("first", "Hello", "2024-05-01T10:00:00Z"),
        ("unused", "No exchanges yet", "2024-05-03 00:00:00"),
    ])
    db.executemany("INSERT INTO exchanges (session_id, role, content, embedding, created_at) VALUES (?, ?, ?, ?, ?)", [
        ("first", "user", "Hi, I'm Sam.", b"\x00\x01", "2024-05-01T10:00:01Z"),
        ("first", "assistant", "Hello Sam!", None, "2024-05-01T10:00:02Z"),
        ("later", "user", "Hiking on Saturday?", None, 1714640400),
        ("later", "assistant", "Sounds great.", None, "2024-05-02 09:00:05"),
    ])
    db.executemany("INSERT INTO summaries (session_id, content, last_exchange_id) VALUES (?, ?, ?)", [
        ("first", "Sam said hi.", 1),
        ("first", "Sam introduced himself; Lyra greeted him.", 2),
    ])
    if extra_sql:
        db.executescript(extra_sql)
    db.commit()
    db.close()
    return path


def test_sessions_exchanges_and_gists(tmp_path):
    path = make_db(tmp_path / "lyra.db")
    before = path.read_bytes()
    corpus = load(path)
    assert path.read_bytes() == before  # opened read-only
    assert corpus.format == "lyra_db"
    assert corpus.sha256 == hashlib.sha256(before).hexdigest()
    (conv,) = corpus.conversations
    assert conv.id == "lyra"
    # sessions by created_at; the one without exchanges is left out
    assert [(s.id, s.title, s.started_at) for s in conv.sessions] == [
        ("first", "Hello", utc(2024, 5, 1, 10)), ("later", "Weekend plans", utc(2024, 5, 2, 9))]
    first, later = conv.sessions
    assert [(t.id, t.role, t.text, t.timestamp) for t in first.turns] == [
        ("1", "user", "Hi, I'm Sam.", utc(2024, 5, 1, 10, 0, 1)),
        ("2", "assistant", "Hello Sam!", utc(2024, 5, 1, 10, 0, 2))]
    assert later.turns[0].timestamp == utc(2024, 5, 2, 9)  # epoch seconds
    assert first.gist == "Sam introduced himself; Lyra greeted him."  # the newest summary
    assert first.meta == {"gist_last_exchange_id": 2}
    assert later.gist is None


def test_db_without_summaries_table_still_imports(tmp_path):
    path = make_db(tmp_path / "lyra.db", "DROP TABLE summaries;")
    assert all(s.gist is None for s in load(path).conversations[0].sessions)


@pytest.mark.parametrize("sql, where, problem", [
    ("DROP TABLE exchanges;", "table exchanges", "missing: not a Lyra memory DB"),
    ("INSERT INTO exchanges (session_id, role, content) VALUES ('first', 'system', 'x');",
     "exchanges[id=5].role", "unknown role 'system'"),
    ("INSERT INTO exchanges (session_id, role, content) VALUES ('ghost', 'user', 'x');",
     "exchanges[id=5].session_id", "session 'ghost' is not in table sessions"),
    ("INSERT INTO exchanges (session_id, role, content, created_at) VALUES ('first', 'user', 'x', 'noon');",
     "exchanges[id=5].created_at", "not an ISO 8601 timestamp"),
])
def test_bad_rows_are_named(tmp_path, sql, where, problem):
    path = make_db(tmp_path / "lyra.db", sql)
    with pytest.raises(CorpusFormatError) as err:
        load(path)
    assert str(err.value).startswith(f"{path}: {where}: ")
    assert problem in str(err.value)


def test_format_mismatch_with_sqlite_is_an_error(tmp_path):
    path = make_db(tmp_path / "lyra.db")
    with pytest.raises(CorpusFormatError, match="is an SQLite database, not chatgpt"):
        load(path, format="chatgpt")
    text = tmp_path / "x.json"
    text.write_text("[]", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="not an SQLite database"):
        load(text, format="lyra_db")
