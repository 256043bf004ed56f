"""The demo's dataset, ``datasets/synthetic_demo.jsonl``: the command datasets/README.md gives makes it, byte for byte."""

from __future__ import annotations

import shlex
from pathlib import Path

from lyra_lab.corpus import load
from lyra_lab.synthetic._cli import main

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "datasets" / "synthetic_demo.jsonl"
COMMAND = ("python -m lyra_lab.synthetic --seed 0 --conversations 8 --sessions 3 --single-facts 4 "
           "--updated-facts 1 --temporal 3 --multi-hop 0 --abstention 1 --out datasets/synthetic_demo.jsonl")


def test_the_documented_command_regenerates_the_demo_dataset(tmp_path):
    readme = (REPO / "datasets" / "README.md").read_text(encoding="utf-8")
    assert COMMAND in " ".join(readme.split())
    args = shlex.split(COMMAND)[3:]
    out = tmp_path / "again.jsonl"
    assert main([*args[:-1], str(out)]) == 0
    assert out.read_bytes() == COMMITTED.read_bytes()


def test_the_demo_dataset_has_the_counts_its_readme_states():
    corpus = load(COMMITTED)
    answerable = [p for p in corpus.probes if p.evidence]
    assert (len(corpus.conversations), sum(len(c.sessions) for c in corpus.conversations)) == (8, 24)
    assert (len(corpus.probes), len(answerable)) == (72, 64)


def test_the_per_category_flags_reach_the_generator(tmp_path, capsys):
    out = tmp_path / "x.jsonl"
    assert main(["--conversations", "1", "--sessions", "4", "--single-facts", "2", "--updated-facts", "0",
                 "--temporal", "1", "--multi-hop", "0", "--abstention", "0", "--out", str(out)]) == 0
    assert "3 probes (single_fact 2, updated_fact 0, temporal 1, multi_hop 0, abstention 0)" in capsys.readouterr().out
    assert main(["--single-facts", "99", "--out", str(out)]) == 2
    assert "single_facts must be 0..12, got 99" in capsys.readouterr().err
