"""Planted probes in every language of ``PLANT_LANGUAGES``: planted and read back, as many as asked, a minority."""

from __future__ import annotations

import py3langid
import pytest

import lyra_lab
from lyra_lab.cli import main
from lyra_lab.synthetic import MAX_SHARE, PLANT_LANGUAGES, plant_probes, planted_share_warnings, planting_warnings
from lyra_lab.synthetic._faker_kinds import faker_templates
from lyra_lab.synthetic._lang_ko import PARTICLE, finish
from lyra_lab.synthetic._plant_templates import LANGUAGES
from tests.helpers.histories import FRENCH_FIXTURE, exchanges_of, write_history

NINE = {"en", "ko", "fr", "es", "de", "pt", "it", "ja", "zh"}


def history(code: str, tmp_path):
    if code == "fr":
        return lyra_lab.load(FRENCH_FIXTURE)  # hand-written French, committed
    return lyra_lab.load(write_history(tmp_path / f"{code}.jsonl", exchanges_of(LANGUAGES[code])))


def test_the_languages_asked_for_are_supported():
    assert NINE <= set(PLANT_LANGUAGES)


@pytest.mark.parametrize("code", sorted(NINE))
def test_sixty_probes_planted_in_the_historys_language_and_read_back(code, tmp_path):
    real = history(code, tmp_path)
    corpus = plant_probes(real, n=60, seed=0)
    assert len(corpus.probes) == 60  # --n honoured: no pool runs out
    conv = corpus.conversations[0]
    meta = conv.meta["planted"]
    assert meta["language"] == meta["history_language"] == code and planting_warnings(corpus) == []
    turns = {t.id: t for t in corpus.turns()}
    planted = [t for t in turns.values() if t.meta.get("planted")]
    real_turns = len(list(real.turns()))
    assert meta["share"] == pytest.approx(len(planted) / (len(planted) + real_turns), abs=1e-4)
    assert len(planted) / (len(planted) + real_turns) <= MAX_SHARE and planted_share_warnings(corpus) == []
    said = "\n".join(t.text for t in planted)
    assert py3langid.classify(said)[0] == code  # the planted text reads as the intended language
    asked = "\n".join(p.question for p in corpus.probes)
    assert py3langid.classify(asked)[0] == code
    assert "‹" not in said + asked and "{" not in said + asked  # every marker resolved
    assert not PARTICLE.search(said + asked) and ".." not in said.replace("...", "")
    for probe in corpus.probes:
        if probe.category in ("single_fact", "updated_fact"):
            assert probe.answer in turns[probe.evidence[0]].text
        if probe.category == "multi_hop":
            intro, link = (turns[e] for e in probe.evidence)
            assert probe.meta["person"] in intro.text and probe.answer in link.text
        if probe.category == "abstention":
            assert not any(term in said.lower() + "\n" + "\n".join(t.text.lower() for t in real.turns())
                           for term in probe.meta["absent_terms"])
    assert {p.category for p in corpus.probes} == {"single_fact", "updated_fact", "temporal", "multi_hop",
                                                   "abstention"}


def test_the_same_seed_plants_the_same_bytes_and_another_seed_other_names(tmp_path):
    real = history("fr", tmp_path)
    a, b = plant_probes(real, n=20, seed=1), plant_probes(real, n=20, seed=1)
    assert a.save(tmp_path / "a.jsonl").read_bytes() == b.save(tmp_path / "b.jsonl").read_bytes()
    assert {p.question for p in plant_probes(real, n=20, seed=2).probes} != {p.question for p in a.probes}


def test_korean_particles_follow_the_final_consonant():
    assert finish("서산시(으)로, 영월군(으)로, 서울(으)로") == "서산시로, 영월군으로, 서울로"
    assert finish("지혜(이)에요 민준(이)에요 동료은/는 동료이/가 가방을/를 사람과/와") == \
        "지혜예요 민준이에요 동료는 동료가 가방을 사람과"


def test_gender_agrees_with_the_person():
    french = faker_templates(LANGUAGES["fr"], "s", 40)
    german = faker_templates(LANGUAGES["de"], "s", 40)
    lines = [s for k in french.facts for s in k.statements] + [s for k in german.facts for s in k.statements]
    assert any(s.startswith("Mon ami ") for s in lines) and any(s.startswith("Mon amie ") for s in lines)
    assert any(s.startswith("Mein Freund ") for s in lines) and any(s.startswith("Meine Freundin ") for s in lines)
    assert all("Meine Freund " not in s and "Mein Freundin" not in s for s in lines)
    assert any(r.startswith("ma collègue") for r in french.relations)
    assert any(r.startswith("mon collègue") for r in french.relations)


def test_planted_turns_past_the_share_are_shortened_then_warned(tmp_path):
    real = lyra_lab.load(write_history(tmp_path / "small.jsonl", exchanges_of(LANGUAGES["es"]), sessions=40,
                                        per_session=(3,)))
    free = plant_probes(real, n=60, seed=0, max_share=None)
    kept = plant_probes(real, n=60, seed=0)
    count = len(list(real.turns()))

    def planted(c):
        return sum(1 for t in c.turns() if t.meta.get("planted"))

    assert planted(kept) < planted(free) and len(kept.probes) == len(free.probes) == 60
    assert planted(kept) < count  # still a minority of all turns
    (line,) = planted_share_warnings(kept)
    assert "above the 30% share" in line and "--n" in line


def test_the_plant_command_states_the_share_and_warns_past_it(tmp_path, capsys):
    path = write_history(tmp_path / "de.jsonl", exchanges_of(LANGUAGES["de"]), sessions=150)
    assert main(["probes", "plant", str(path), "--n", "60", "--out", str(tmp_path / "p.jsonl")]) == 0
    out = capsys.readouterr()
    read = " ".join(out.out.split())  # as read, across the terminal's wrapped lines
    assert "60 planted probes" in read and "% of all turns (held to at most 30% per conversation" in read
    assert all(len(line) <= 100 for line in out.out.splitlines()[1:] + out.err.splitlines())
    assert "planted text in de, the history's own language" in out.out and "warning" not in out.err
    assert main(["probes", "plant", str(path), "--n", "60", "--max-share", "0.1", "--out",
                 str(tmp_path / "q.jsonl")]) == 0
    assert "warning: " in capsys.readouterr().err
