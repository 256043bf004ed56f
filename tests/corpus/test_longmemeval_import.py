import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from lyra_lab.corpus import CorpusFormatError, load
from lyra_lab.corpus._longmemeval import parse_date

FIXTURE = Path(__file__).parents[1] / "fixtures" / "corpus" / "longmemeval_mini.json"


def utc(*args):
    return datetime(*args, tzinfo=timezone.utc)


def test_parse_date():
    assert parse_date("2023/05/20 (Sat) 02:21") == utc(2023, 5, 20, 2, 21)
    with pytest.raises(ValueError, match="not a LongMemEval date"):
        parse_date("20 May 2023")


def test_instances_become_conversations_in_time_order():
    corpus = load(FIXTURE)
    assert corpus.format == "longmemeval"
    q1, q2 = corpus.conversations
    assert (q1.id, q2.id) == ("q1", "q2_abs")
    # haystack order was sharegpt (05-20), answer (05-25), ultrachat (05-01): imported by time
    assert [(s.id, s.started_at) for s in q1.sessions] == [
        ("ultrachat_9", utc(2023, 5, 1, 8)), ("sharegpt_x_0", utc(2023, 5, 20, 2, 21)),
        ("answer_q1_1", utc(2023, 5, 25, 10))]
    answer = q1.sessions[2]
    assert [(t.id, t.role, t.text, t.timestamp) for t in answer.turns] == [
        ("answer_q1_1_1", "user", "My dog Rex loves long walks.", utc(2023, 5, 25, 10, 0, 0)),
        ("answer_q1_1_2", "assistant", "Rex sounds lovely!", utc(2023, 5, 25, 10, 0, 1)),
    ]
    assert answer.turns[0].meta == {"has_answer": True} and answer.turns[1].meta == {}
    assert [s.id for s in q2.sessions] == ["answer_q2_1"]  # the empty session is not imported


def test_probes_evidence_abstention_and_dates():
    p1, p2 = load(FIXTURE).probes
    assert (p1.id, p1.conversation_id, p1.answer, p1.category) == ("q1", "q1", "Rex", "single-session-user")
    assert p1.evidence == ("answer_q1_1_1",)  # only the turn marked has_answer
    assert p1.asked_at == utc(2023, 5, 30, 23, 40)
    assert not p1.abstention
    # no has_answer marks: every turn of the answer session is evidence
    assert p2.evidence == ("answer_q2_1_1", "answer_q2_1_2")
    assert p2.abstention and p2.category == "knowledge-update"


def test_repeated_haystack_session_id_gets_a_suffix(tmp_path):
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    doc[0]["haystack_session_ids"][2] = "sharegpt_x_0"
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    q1 = load(path).conversations[0]
    again = q1.sessions[0]
    assert again.id == "sharegpt_x_0#2" and again.meta == {"source_session_id": "sharegpt_x_0"}
    assert again.turns[0].id == "sharegpt_x_0#2_1"
    assert len({t.id for t in q1.turns()}) == 6


@pytest.mark.parametrize("mutate, where, problem", [
    (lambda d: d[0]["haystack_dates"].pop(), "$[0]", "differ in length (3, 2, 3)"),
    (lambda d: d[0]["haystack_dates"].__setitem__(1, "May 25"), "$[0].haystack_dates[1]", "not a LongMemEval date"),
    (lambda d: d[0]["haystack_sessions"][1][0].update(role="system"),
     "$[0].haystack_sessions[1][0].role", "unknown role 'system'"),
    (lambda d: d[1].pop("question"), "$[1].question", "missing required field"),
    (lambda d: d[1].pop("question_date"), "$[1].question_date", "missing required field"),
    (lambda d: d[1].update(answer=None), "$[1].answer", "must not be null"),
])
def test_wrong_schema_names_file_and_json_path(tmp_path, mutate, where, problem):
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    mutate(doc)
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(CorpusFormatError) as err:
        load(path)
    assert str(err.value).startswith(f"{path}: {where}: ")
    assert problem in str(err.value)


def test_a_lone_instance_is_a_one_instance_file(tmp_path):
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    path = tmp_path / "one.json"
    path.write_text(json.dumps(doc[0]), encoding="utf-8")
    corpus = load(path)
    assert corpus.format == "longmemeval"
    assert [c.id for c in corpus.conversations] == ["q1"] and [p.id for p in corpus.probes] == ["q1"]


def test_haystack_sessions_after_the_question_are_flagged_and_counted(tmp_path):
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    doc[0]["haystack_dates"][1] = "2023/06/02 (Fri) 09:00"  # the answer session, after 2023/05/30
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    corpus = load(path)
    late = [s.id for s in corpus.conversations[0].sessions if s.meta.get("after_question")]
    assert late == ["answer_q1_1"]
    assert corpus.probes[0].meta["sessions_after_question"] == 1
    assert "sessions_after_question" not in corpus.probes[1].meta


@pytest.mark.parametrize("ids, where", [
    ([["answer_q1_1"]], "$[0].answer_session_ids[0]"),
    ([{"id": 1}], "$[0].answer_session_ids[0]"),
])
def test_unhashable_answer_session_ids_are_a_format_error(tmp_path, ids, where):
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    doc[0]["answer_session_ids"] = ids
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(CorpusFormatError) as err:
        load(path)
    assert str(err.value).startswith(f"{path}: {where}: expected a session id string")
