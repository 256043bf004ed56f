"""The report's share of top-k hits that are planted turns, by hand and over a run on a planted Korean history."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import lyra_lab
from lyra_lab.backends import FakeLLM, HashingEmbedder
from lyra_lab.experiments import ExperimentSpec, Injected, RunOptions, run_experiment
from lyra_lab.reports import write_report
from lyra_lab.reports._planted_report import planted_share
from lyra_lab.runs import AliasOf, LoggedProbes
from lyra_lab.synthetic import plant_probes

KOREAN = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "chatgpt" / "korean.json"


def test_planted_share_by_hand():
    """k = 3.  A|bm25, probe q1: p1, p2, r1 (+ a 4th hit past k) → 2 planted of 3; q2: a digest over p1+r1 (mixed),
    a digest over p2 only (planted), a hit naming no turn (untraced) → 1 planted of 2 traced.  Pooled: 3 of 5.
    B|bm25 (an alias of A's cell): the same events.  C|dense: no event for its probe: not counted."""
    rows = pd.DataFrame([
        {"pipeline": "A|bm25", "cell_id": "a", "probe_id": "q1"}, {"pipeline": "A|bm25", "cell_id": "a", "probe_id": "q1"},
        {"pipeline": "A|bm25", "cell_id": "a", "probe_id": "q2"}, {"pipeline": "B|bm25", "cell_id": "b", "probe_id": "q1"},
        {"pipeline": "C|dense", "cell_id": "c", "probe_id": "q1"}, {"pipeline": "A|bm25", "cell_id": "a", "probe_id": ""}])
    logged = LoggedProbes()
    logged.details[("a", "bm25", "q1")] = {"hits": [{"id": "turn:p1"}, {"id": "turn:p2"}, {"id": "turn:r1"},
                                                    {"id": "turn:p3"}]}
    logged.details[("a", "bm25", "q2")] = {"hits": [{"id": "summary:1", "turn_ids": ["p1", "r1"]},
                                                    {"id": "summary:2", "turn_ids": ["p2"]}, {"id": "mem0:x"}]}
    logged.aliases["b"] = AliasOf("a", "A")
    table = planted_share(rows, logged, {"p1", "p2", "p3"}, k=3).set_index("pipeline")
    a = table.loc["A|bm25"]
    assert (a["probes"], a["traced"], a["planted"], a["mixed"], a["untraced"], a["only_planted"]) == (2, 5, 3, 1, 1, 0)
    assert a["planted_share"] == pytest.approx(3 / 5)
    b = table.loc["B|bm25"]
    assert (b["probes"], b["traced"], b["planted"]) == (1, 3, 2)
    c = table.loc["C|dense"]
    assert c["probes"] == 0 and pd.isna(c["planted_share"])


GRID = {"name": "ko", "grid": {"chunkers": [{"name": "turn_window", "max_turns": 1}], "summarizers": ["none"],
                               "recallers": ["bm25", "dense"]},
        "run": {"backends": ["fake"], "embedders": ["hashing"], "ks": [1, 5], "cache": "off"}}


@pytest.fixture(scope="module")
def planted_run(tmp_path_factory):
    """The issue's case: a Korean history planted in English (forced), so the planted turns stand out."""
    root = tmp_path_factory.mktemp("planted")
    corpus = plant_probes(lyra_lab.load(KOREAN), n=10, seed=0, language="en")
    corpus.save(root / "planted.jsonl")
    spec = ExperimentSpec.from_dict({**GRID, "corpus": {"path": str(root / "planted.jsonl")}})
    run_experiment(spec, root / "run", RunOptions(progress=False),
                   Injected(backends={"fake": FakeLLM()}, embedders={"hashing": HashingEmbedder()}))
    write_report(root / "run", n_resamples=50)
    return root / "run", corpus


def test_the_report_gives_the_planted_share_per_pipeline_and_the_language_warning(planted_run):
    run, corpus = planted_run
    planted = {t.id for t in corpus.turns() if t.meta.get("planted")}
    events = [json.loads(line) for line in (run / "log.jsonl").read_text(encoding="utf-8").splitlines()]
    md = (run / "report" / "summary.md").read_text(encoding="utf-8")
    section = md.split("## Planted turns among the hits")[1].split("\n## ")[0]
    total = len(list(corpus.turns()))
    assert f"Planted turns are {len(planted):,} of the {total:,} turns" in section and "top 5 hits" in section
    for recaller in ("bm25", "dense"):
        hits = [h["id"][5:] for e in events if e.get("event") == "probe_detail" and e["recaller"] == recaller
                for h in e["hits"][:5]]
        probes = sum(1 for e in events if e.get("event") == "probe_detail" and e["recaller"] == recaller)
        share = sum(h in planted for h in hits)
        line = next(x for x in section.splitlines() if x.startswith(f"| turn_window+none+none\\|{recaller} |"))
        assert f"| {probes} | {len(hits)} | {share / len(hits):.1%} ({share} of {len(hits)}) |" in line
    warning = "planted text is in English but this history is mostly Korean"
    assert f"> **Warning:** korean: {warning}" in md and f"Warning: korean: {warning}" in section
    page = (run / "report" / "report.html").read_text(encoding="utf-8")
    assert "<h2 id=planted>Planted turns among the hits</h2>" in page and warning in page
    assert 'href="#planted">planted text in another language than the history</a>' in page  # said on the first screen


def test_no_planted_section_without_planted_turns(tmp_path):
    spec = ExperimentSpec.from_dict({**GRID, "corpus": {"path": str(KOREAN)}})
    run_experiment(spec, tmp_path / "run", RunOptions(progress=False),
                   Injected(backends={"fake": FakeLLM()}, embedders={"hashing": HashingEmbedder()}))
    write_report(tmp_path / "run", n_resamples=20)
    assert "Planted turns among the hits" not in (tmp_path / "run" / "report" / "summary.md").read_text(encoding="utf-8")
