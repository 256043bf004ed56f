import json
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest

from lyra_lab.corpus import CorpusFormatError, load
from lyra_lab.corpus._locomo import parse_date
from tests.helpers.locomo import locomo_path

FIXTURE = Path(__file__).parents[1] / "fixtures" / "corpus" / "locomo_mini.json"


def utc(*args):
    return datetime(*args, tzinfo=timezone.utc)


@pytest.mark.parametrize("text, expected", [
    ("1:56 pm on 8 May, 2023", utc(2023, 5, 8, 13, 56)),
    ("12:30 pm on 19 June, 2023", utc(2023, 6, 19, 12, 30)),
    ("12:05 am on 2 August, 2023", utc(2023, 8, 2, 0, 5)),
    ("10:04 am on 19 December, 2023", utc(2023, 12, 19, 10, 4)),
])
def test_parse_date(text, expected):
    assert parse_date(text) == expected


def test_parse_date_rejects_other_shapes():
    with pytest.raises(ValueError, match="not a LoCoMo date"):
        parse_date("2023-05-08 13:56")


def test_sessions_turns_speakers_and_times():
    corpus = load(FIXTURE)
    assert corpus.format == "locomo"
    assert [c.id for c in corpus.conversations] == ["conv-1", "conv-2"]
    conv = corpus.conversations[0]
    # session_3 is empty and session_4 has only a date: neither is imported; session_10 sorts after 2
    assert [s.id for s in conv.sessions] == ["conv-1:session_1", "conv-1:session_2", "conv-1:session_10"]
    s1 = conv.sessions[0]
    assert s1.started_at == utc(2023, 5, 8, 13, 56)
    assert [(t.id, t.role, t.speaker, t.timestamp) for t in s1.turns] == [
        ("conv-1:D1:1", "user", "Ann", utc(2023, 5, 8, 13, 56, 0)),
        ("conv-1:D1:2", "assistant", "Bob", utc(2023, 5, 8, 13, 56, 1)),
        ("conv-1:D1:3", "user", "Ann", utc(2023, 5, 8, 13, 56, 2)),
    ]
    assert s1.turns[1].text == "Look at this. [image: a photo of a cat on a sofa]"
    assert s1.turns[1].meta["img_url"] == ["https://example.org/cat.jpg"]
    assert s1.meta == {"locomo_summary": "Ann tells Bob she adopted a cat."}
    assert conv.sessions[2].turns[0].timestamp == utc(2023, 8, 2, 0, 5)


def test_probes_categories_answers_and_evidence():
    corpus = load(FIXTURE)
    probes = {p.id: p for p in corpus.probes}
    assert list(probes) == ["conv-1:qa0", "conv-1:qa1", "conv-1:qa2", "conv-1:qa3"]
    asked = utc(2023, 8, 2, 0, 5, 1)  # one second after the sample's last turn
    assert all(p.asked_at == asked and p.conversation_id == "conv-1" for p in probes.values())
    first = probes["conv-1:qa0"]
    assert (first.answer, first.evidence, first.category, first.adversarial) == ("a cat", ("conv-1:D1:3",), 4, False)
    assert first.meta == {}
    # a numeric answer becomes text; "D1:3; D2:02" is split and normalised, the raw value kept
    year = probes["conv-1:qa1"]
    assert (year.answer, year.evidence) == ("2023", ("conv-1:D1:3", "conv-1:D2:2"))
    assert year.meta == {"raw_evidence": ["D1:3; D2:02"]}
    adversarial = probes["conv-1:qa2"]
    assert adversarial.adversarial and adversarial.category == 5 and adversarial.answer == "Yes"
    assert adversarial.evidence == ("conv-1:D2:1",)
    assert adversarial.meta["dropped_evidence"] == ["D99:1"]
    assert adversarial.meta["answer_field"] == "adversarial_answer"
    assert probes["conv-1:qa3"].evidence == ()


@pytest.mark.parametrize("mutate, where, problem", [
    (lambda d: d[0]["conversation"].update(session_2_date_time="June 19"),
     "$[0].conversation.session_2_date_time", "not a LoCoMo date"),
    (lambda d: d[0]["conversation"].pop("session_1_date_time"),
     "$[0].conversation.session_1_date_time", "missing required field"),
    (lambda d: d[0]["conversation"]["session_2"][1].update(speaker="Eve"),
     "$[0].conversation.session_2[1].speaker", "neither speaker_a nor speaker_b"),
    (lambda d: d[0]["conversation"]["session_1"][0].pop("dia_id"),
     "$[0].conversation.session_1[0].dia_id", "missing required field"),
    (lambda d: d[0]["qa"][1].pop("answer"), "$[0].qa[1].answer", "nor is there an adversarial_answer"),
    (lambda d: d[0]["qa"][0].update(category="four"), "$[0].qa[0].category", "expected an integer"),
    (lambda d: d[1].pop("sample_id"), "$[1].sample_id", "missing required field"),
])
def test_wrong_schema_names_file_and_json_path(tmp_path, mutate, where, problem):
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    mutate(doc)
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(CorpusFormatError) as err:
        load(path, format="locomo")
    assert str(err.value).startswith(f"{path}: {where}: ")
    assert problem in str(err.value)


@pytest.fixture(scope="module")
def real_locomo():
    return load(locomo_path())


def test_real_locomo_counts(real_locomo):
    stats = real_locomo.stats()
    assert (stats["conversations"], stats["sessions"], stats["turns"], stats["probes"]) == (10, 272, 5882, 1986)
    assert real_locomo.sha256 == "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"
    assert Counter(p.category for p in real_locomo.probes) == {1: 282, 2: 321, 3: 96, 4: 841, 5: 446}
    assert sum(p.adversarial for p in real_locomo.probes) == 446


def test_real_locomo_evidence_is_valid_and_repairs_are_recorded(real_locomo):
    turn_ids = {t.id for t in real_locomo.turns()}
    assert all(e in turn_ids for p in real_locomo.probes for e in p.evidence)
    dropped = sorted((p.id, d) for p in real_locomo.probes for d in p.meta.get("dropped_evidence", ()))
    # the ids in the published file that name no turn at all
    assert dropped == [("conv-42:qa58", "D10:19"), ("conv-42:qa88", "D"), ("conv-47:qa38", "D4:36")]
    split = next(p for p in real_locomo.probes if p.id == "conv-26:qa37")
    assert split.meta["raw_evidence"] == ["D8:6; D9:17"]
    assert split.evidence == ("conv-26:D8:6", "conv-26:D9:17")
