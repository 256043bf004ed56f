"""plant_probes: planted evidence sessions in a user's own history, probes that point at them, a grid over them."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import pytest

import lyra_lab
from lyra_lab._registry import ConfigError
from lyra_lab.backends import FakeLLM, HashingEmbedder
from lyra_lab.synthetic import CATEGORIES, plant_probes, planted_counts
from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment

T0 = datetime(2024, 2, 1, 9, 0, tzinfo=UTC)
ASKS = ["How do I make my python script read a csv file and skip the header row without pandas?",
        "Can you suggest a weekend itinerary for a rainy city break, nothing too touristy please?",
        "Rewrite this email so it sounds less passive aggressive: per my last message, the report is late.",
        "What is a good stretching routine after running, I only have ten minutes most mornings.",
        "Explain the difference between a list and a tuple like I'm new to programming."]
REPLIES = ["Use the csv module: open the file, call next(reader) once to skip the header, then loop.",
           "Pick one neighbourhood, a museum for the wettest hours, and a long lunch somewhere warm.",
           "Try: Following up on the report, could you let me know when to expect it? Thanks!",
           "Hamstrings, calves, hip flexors and quads: thirty seconds each side, breathing slowly.",
           "A list can change after you make it; a tuple cannot, so it is safer for fixed records."]


def write_export(path, sessions: int = 12, seed: int = 7):
    """A generic-JSONL export: one user, sessions days to weeks apart, 1-4 exchanges each, source ids."""
    rng = random.Random(seed)
    lines, clock, mid = [], T0, 0
    for s in range(sessions):
        clock += timedelta(days=rng.randint(2, 12), hours=rng.randint(0, 8))
        at = clock
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(ASKS))
            for role, text in (("user", ASKS[i]), ("assistant", REPLIES[i])):
                mid += 1
                lines.append({"session_id": f"chat-{s}", "role": role, "content": text,
                              "timestamp": at.isoformat(), "id": f"m{mid:04d}"})
                at += timedelta(seconds=rng.randint(20, 200))
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def export(tmp_path):
    return lyra_lab.load(write_export(tmp_path / "history.jsonl"))


def planted_turns(corpus):
    return {t.id: t for t in corpus.turns() if t.meta.get("planted")}


def test_planting_is_deterministic_and_keeps_real_turns_unchanged(export, tmp_path):
    a = plant_probes(export, n=20, seed=3)
    b = plant_probes(export, n=20, seed=3)
    assert a.save(tmp_path / "a.jsonl").read_bytes() == b.save(tmp_path / "b.jsonl").read_bytes()
    assert plant_probes(export, n=20, seed=4).probes != a.probes
    real = list(export.turns())
    assert [t for t in a.turns() if not t.meta.get("planted")] == real
    assert all(dict(t.meta) == dict(r.meta) for t, r in zip([t for t in a.turns() if not t.meta.get("planted")], real))
    assert set(planted_turns(a)).isdisjoint({t.id for t in real})
    assert len({t.id for t in a.turns()}) == len(list(a.turns()))
    assert sum(planted_counts(a).values()) == len(a.probes) == 20


def test_evidence_is_exactly_the_planted_fact_turns(export):
    corpus = plant_probes(export, n=25, seed=1)
    planted = planted_turns(corpus)
    evidence = {e for p in corpus.probes for e in p.evidence}
    superseded = {e for p in corpus.probes for e in p.meta.get("superseded", ())}
    facts = {tid for tid, t in planted.items() if "planted_fact" in t.meta}
    assert evidence <= facts and evidence | superseded == facts
    assert all(planted[e].role == "user" for e in evidence)
    sessions = [s for c in corpus.conversations for s in c.sessions]
    assert all(all(t.meta.get("planted") for t in s.turns) for s in sessions if s.meta.get("planted"))
    for s in (s for s in sessions if s.meta.get("planted")):
        assert [t.role for t in s.turns] == ["user", "assistant"] * (len(s.turns) // 2)


def test_probes_are_asked_after_their_evidence_and_planted_sessions_sit_in_gaps(export):
    corpus = plant_probes(export, n=25, seed=2)
    turns = {t.id: t for t in corpus.turns()}
    for probe in corpus.probes:
        assert probe.meta["planted"] is True
        assert all(turns[e].timestamp < probe.asked_at for e in probe.evidence)
    real = sorted((min(t.timestamp for t in s.turns), max(t.timestamp for t in s.turns))
                  for s in export.conversations[0].sessions)
    for s in corpus.conversations[0].sessions:
        if s.meta.get("planted"):
            lo, hi = s.turns[0].timestamp, s.turns[-1].timestamp
            assert not any(a <= hi and lo <= b for a, b in real)  # never overlaps a real session


def test_categories_answer_as_planted(export):
    corpus = plant_probes(export, n=30, seed=5)
    turns = {t.id: t for t in corpus.turns()}
    by_kind = {k: [p for p in corpus.probes if p.category == k] for k in CATEGORIES}
    assert all(by_kind[k] for k in CATEGORIES)
    for p in by_kind["updated_fact"]:
        (new,) = p.evidence
        (old,) = p.meta["superseded"]
        assert p.answer in turns[new].text and turns[old].timestamp < turns[new].timestamp
        assert p.answer != p.meta["old_value"]
    for p in by_kind["abstention"]:
        assert p.abstention and p.evidence == () and p.answer == "not mentioned"
        text = " ".join(t.text.lower() for t in corpus.turns())
        assert not any(term in text for term in p.meta["absent_terms"])
    for p in by_kind["temporal"]:
        (e,) = p.evidence
        assert p.answer == (turns[e].timestamp.date() - timedelta(days=p.meta["days_before"])).isoformat()
    for p in by_kind["multi_hop"]:
        intro, link = (turns[e] for e in p.evidence)
        assert intro.session_id != link.session_id and intro.timestamp < link.timestamp
        assert p.meta["person"] in intro.text and p.answer in link.text
    for p in by_kind["single_fact"]:
        assert p.answer in turns[p.evidence[0]].text


def test_kinds_and_n_are_checked_and_a_saved_corpus_loads_back(export, tmp_path):
    with pytest.raises(ConfigError, match="unknown probe kind"):
        plant_probes(export, kinds=["gossip"])
    with pytest.raises(ConfigError, match="n must be"):
        plant_probes(export, n=0)
    only = plant_probes(export, n=4, kinds=["temporal"], seed=0)
    assert {p.category for p in only.probes} == {"temporal"}
    loaded = lyra_lab.load(only.save(tmp_path / "planted.jsonl"))
    assert loaded.probes == only.probes and list(loaded.turns()) == list(only.turns())
    assert all(t.meta.get("planted") for t in planted_turns(loaded).values())


GRID = """
name = "planted"
[corpus]
path = "planted.jsonl"
[grid]
chunkers = [{ name = "turn_window", max_turns = 2 }]
summarizers = ["none", "single_pass"]
recallers = ["dense", "bm25", "hybrid", "recency", "tiered"]
[run]
backends = ["fake"]
embedders = ["hashing"]
ks = [1, 5]
cache = "off"
"""


def test_a_grid_over_an_export_with_planted_probes_scores_every_recaller(export, tmp_path):
    corpus = plant_probes(export, n=15, seed=0)
    corpus.save(tmp_path / "planted.jsonl")
    (tmp_path / "exp.toml").write_text(GRID, encoding="utf-8")
    spec = ExperimentSpec.from_toml(tmp_path / "exp.toml")
    df = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": FakeLLM()}, embedders={"hashing": HashingEmbedder()}))
    assert not df.attrs.get("failed_cells")
    recall = df[df["metric"] == "evidence_recall@5"]
    answerable = {p.id for p in corpus.probes if not p.abstention}
    for recaller in ("dense", "bm25", "hybrid", "recency", "tiered"):
        rows = recall[recall["recaller"] == recaller]
        assert set(rows["probe_id"]) == answerable, recaller


def test_reports_split_planted_probes_from_the_datasets_own(export, tmp_path):
    import dataclasses

    import pandas as pd

    from lyra_lab.corpus import Probe
    from lyra_lab.reports import write_report

    # two probes of the user's own history (as a dataset or a reviewed draft would give), about real turns
    conv = export.conversations[0]
    turns = [t for t in conv.turns() if t.role == "user"][:2]
    own = tuple(Probe(id=f"own{i}", conversation_id=conv.id, question=f"What did I say about {t.text[:20]}?",
                      answer=t.text.split()[0], evidence=(t.id,), category="single_fact") for i, t in enumerate(turns))
    corpus = plant_probes(dataclasses.replace(export, probes=own), n=6, kinds=["single_fact"], seed=0)
    corpus.save(tmp_path / "planted.jsonl")
    (tmp_path / "exp.toml").write_text(GRID.replace('summarizers = ["none", "single_pass"]', 'summarizers = ["none"]')
                                       .replace('"dense", "bm25", "hybrid", "recency", "tiered"', '"bm25"'),
                                       encoding="utf-8")
    df = run_experiment(ExperimentSpec.from_toml(tmp_path / "exp.toml"), tmp_path / "run", None, Injected(backends={"fake": FakeLLM()}, embedders={"hashing": HashingEmbedder()}))
    per_probe = df[df["probe_id"] != ""]
    assert per_probe.groupby("probe_id")["probe_origin"].nunique().eq(1).all()
    origin = per_probe.drop_duplicates("probe_id").set_index("probe_id")["probe_origin"]
    assert origin[["own0", "own1"]].tolist() == ["source", "source"]
    assert set(origin.drop(["own0", "own1"])) == {"planted"} and len(origin) == 2 + 6
    write_report(tmp_path / "run", n_resamples=50)
    md = (tmp_path / "run" / "report" / "summary.md").read_text(encoding="utf-8")
    assert "by probe origin" in md
    table = pd.read_csv(tmp_path / "run" / "report" / "by_probe_origin.csv").set_index("probe_origin")
    assert table.loc["source", "n"] == 2 and table.loc["planted", "n"] == 6
