"""Planted probes in the history's language: detection, Korean templates, and a plain warning otherwise."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import lyra_lab
from lyra_lab._registry import ConfigError
from lyra_lab.cli import main
from lyra_lab.synthetic import plant_probes, planting_warnings
from lyra_lab.synthetic._language import detect_language, sample_text, script_counts

KOREAN = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "chatgpt" / "korean.json"
HANGUL = re.compile(r"[\uac00-\ud7a3]")
GERMAN = ["Kannst du mir helfen, eine E-Mail an meinen Vermieter zu schreiben? Die Heizung ist wieder kaputt.",
          "Ich möchte am Wochenende wandern gehen, aber es soll regnen. Was soll ich stattdessen machen?",
          "Wie koche ich Linsen, damit sie nicht matschig werden? Ich habe keine Zeit zum Einweichen.",
          "Erkläre mir bitte den Unterschied zwischen einer Liste und einem Tupel in Python."]
DUTCH = ["Kun je me helpen een e-mail aan mijn huisbaas te schrijven? De verwarming is weer kapot.",
         "Ik wil dit weekend gaan wandelen, maar het gaat regenen. Wat kan ik beter doen?",
         "Hoe kook ik linzen zodat ze niet papperig worden? Ik heb geen tijd om ze te weken.",
         "Leg me alsjeblieft het verschil uit tussen een lijst en een tupel in Python."]


@pytest.mark.parametrize(("texts", "code", "script"), [
    (["오늘 점심 뭐 먹을지 추천해 줘. python csv 파일 읽는 법도 알려 줘."], "ko", "HANGUL"),
    (["How do I make my python script skip the header row of a csv file?"], "en", "LATIN"),
    (GERMAN, "de", "LATIN"),
    (["今日は天気がいいですね。散歩に行きましょうか。"], "ja", "CJK"),
    (["我今天不想吃饭，明天再说吧。"], "zh", "CJK"),
    (["Привет! Как приготовить чечевицу, чтобы она не разварилась? Времени замачивать у меня нет."],
     "ru", "CYRILLIC"),
    (["1234 ... !!!"], "und", "none"),
    (["hi", "yo"], "und", "LATIN"),  # too few letters to tell (langid would guess)
])
def test_the_main_language_from_script_then_langid(texts, code, script):
    found = detect_language(texts)
    assert (found.code, found.script) == (code, script)


def test_script_counts_and_an_even_sample():
    counts = script_counts("한국어 text と カナ")
    assert counts["HANGUL"] == 3 and counts["LATIN"] == 4 and counts["KANA"] == 3
    texts = [f"{i:04d}" + "x" * 96 for i in range(1000)]  # 100,000 characters
    sample = sample_text(texts, limit=10_000)
    assert sample.startswith("0000") and "0990" in sample and len(sample) < 20_000  # every 10th text, to the end


def test_a_korean_history_gets_korean_planted_probes():
    history = lyra_lab.load(KOREAN)
    corpus = plant_probes(history, n=20, seed=0)
    assert planting_warnings(corpus) == []
    conv = corpus.conversations[0]
    assert conv.meta["planted"]["language"] == conv.meta["planted"]["history_language"] == "ko"
    turns = {t.id: t for t in corpus.turns()}
    planted = [t for t in turns.values() if t.meta.get("planted")]
    assert planted and all(HANGUL.search(t.text) for t in planted)  # every planted line is Korean
    assert len(corpus.probes) == 20 and {p.category for p in corpus.probes} >= {"single_fact", "updated_fact",
                                                                                "temporal", "multi_hop", "abstention"}
    for probe in corpus.probes:
        assert HANGUL.search(probe.question) and probe.meta["language"] == "ko"
        if probe.category in ("single_fact", "updated_fact"):
            assert probe.answer in turns[probe.evidence[0]].text  # the value, verbatim in its evidence
    text = "\n".join(t.text for t in corpus.turns())
    for probe in (p for p in corpus.probes if p.abstention):
        assert not any(term in text for term in probe.meta["absent_terms"])


def test_planted_text_in_another_language_says_so_in_the_corpus_and_its_probes(tmp_path):
    corpus = plant_probes(lyra_lab.load(KOREAN), n=8, seed=0, language="en")
    (warning,) = planting_warnings(corpus)
    assert warning.startswith("korean: planted text is in English but this history is mostly Korean (ko")
    assert "not recall among your own turns" in warning
    saved = lyra_lab.load(corpus.save(tmp_path / "planted.jsonl"))  # the probes file keeps it
    assert planting_warnings(saved) == [warning]
    assert all(p.meta["language"] == "en" and p.meta["history_language"] == "ko" and p.meta["warning"]
               for p in saved.probes)
    with pytest.raises(ConfigError, match="no planting templates in language 'ru'"):
        plant_probes(lyra_lab.load(KOREAN), language="ru")


def write_export(path: Path, asks: list[str], reply: str) -> Path:
    lines, clock = [], datetime(2024, 3, 1, 9, tzinfo=UTC)
    for s in range(10):
        clock += timedelta(days=3)
        for i, text in enumerate((asks[s % 4], reply)):
            lines.append({"session_id": f"chat-{s}", "role": ("user", "assistant")[i], "content": text,
                          "timestamp": (clock + timedelta(minutes=i)).isoformat(), "id": f"m{s}-{i}"})
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in lines) + "\n", encoding="utf-8")
    return path


def test_a_history_without_templates_is_planted_in_english_with_a_warning(tmp_path):
    dutch = write_export(tmp_path / "nl.jsonl", DUTCH, "Graag! Hier is een voorstel.")
    corpus = plant_probes(lyra_lab.load(dutch), n=6, seed=0)
    (warning,) = planting_warnings(corpus)
    assert "planted text is in English but this history is mostly Dutch (nl" in warning
    assert corpus.conversations[0].meta["planted"]["language"] == "en"
    german = plant_probes(lyra_lab.load(write_export(tmp_path / "de.jsonl", GERMAN, "Gern! Hier ist ein Vorschlag.")),
                          n=6, seed=0)  # German has templates now: no warning
    assert planting_warnings(german) == [] and german.conversations[0].meta["planted"]["language"] == "de"


def test_the_plant_command_says_which_language_and_warns(tmp_path, capsys):
    assert main(["probes", "plant", str(KOREAN), "--n", "6", "--out", str(tmp_path / "ko.jsonl")]) == 0
    out = capsys.readouterr()
    assert "planted text in ko, the history's own language" in out.out and "warning" not in out.err
    assert main(["probes", "plant", str(KOREAN), "--n", "6", "--language", "en",
                 "--out", str(tmp_path / "en.jsonl")]) == 0
    out = capsys.readouterr()
    assert "planted text in en; the history's main language: ko" in out.out
    assert "warning: korean: planted text is in English but this history is mostly Korean" in out.err
