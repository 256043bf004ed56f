"""mem0's warnings about the extras lyra-lab leaves out on purpose are filtered; a run says once why.

mem0 logs "Failed to load spaCy lemma model … pip install mem0ai[nlp]" and "fastembed not installed -
BM25 keyword search disabled" as advice; lyra-lab leaves both extras out (they download models at run
time), so ``import_mem0`` filters exactly those records, and a grid's run log holds one
``system_notice`` saying which extras are off and why.
"""

from __future__ import annotations

import json
import logging
import textwrap

import pytest

from lyra_lab.backends import HashingEmbedder
from lyra_lab.experiments import ExperimentSpec, RunOptions, run_experiment
from lyra_lab.systems import Mem0System, run_system
from lyra_lab.systems._mem0 import EXTRAS_OFF, import_mem0
from tests.experiments.conftest import tiny_corpus

NOISE = ("spaCy", "mem0ai[nlp]", "fastembed not installed")


@pytest.fixture
def fresh_mem0_flags(monkeypatch):
    """mem0 warns once per process about spaCy: make this test's session the first again."""
    import_mem0()
    import mem0.utils.spacy_models as spacy_models

    monkeypatch.setattr(spacy_models, "_load_failed_lemma", False)
    monkeypatch.setattr(spacy_models, "_load_failed_full", False)


def test_a_mem0_session_prints_no_advice_about_the_extras_left_out(conversation_and_probes, fresh_mem0_flags,
                                                                   capfd, caplog):
    conv, probes = conversation_and_probes
    with caplog.at_level(logging.INFO):
        run = run_system(Mem0System(), conv, probes[:2], k=3, embedder=HashingEmbedder())
    assert run.ingest.items > 0
    said = capfd.readouterr().err + "\n".join(r.getMessage() for r in caplog.records)
    assert not any(noise in said for noise in NOISE), said


def test_the_filter_drops_only_those_messages(fresh_mem0_flags, caplog):
    with caplog.at_level(logging.WARNING):
        logging.getLogger("mem0.utils.spacy_models").warning(
            "Failed to load spaCy lemma model: spaCy is not installed. Install it with: pip install mem0ai[nlp]")
        logging.getLogger("mem0.vector_stores.qdrant").warning(
            'fastembed not installed - BM25 keyword search disabled. Install it with: pip install "mem0ai[extras]"')
        logging.getLogger("mem0.vector_stores.qdrant").warning("Failed to load BM25 encoder: disk full")
        logging.getLogger("mem0.utils.spacy_models").warning("Failed to load spaCy lemma model: bad wheel")
    assert [r.getMessage() for r in caplog.records] == ["Failed to load BM25 encoder: disk full",
                                                        "Failed to load spaCy lemma model: bad wheel"]


def test_a_grid_with_mem0_says_once_in_its_log_which_extras_are_off(tmp_path):
    corpus_path = tiny_corpus().save(tmp_path / "tiny.jsonl")
    toml = tmp_path / "mem0.toml"
    toml.write_text(textwrap.dedent(f"""
        name = "quiet"
        [corpus]
        path = "{corpus_path}"
        [grid]
        systems = [{{ name = "mem0", infer = false }}]
        [run]
        backends = ["fake"]
        embedders = ["hashing"]
        ks = [1, 3]
        cache = "off"
        """), encoding="utf-8")
    run_experiment(ExperimentSpec.from_toml(toml), tmp_path / "run", RunOptions(progress=False))
    events = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sum(e["event"] == "cell_done" for e in events) == 2  # two conversations, two mem0 cells
    notices = [e for e in events if e["event"] == "system_notice"]
    assert [n["notice"] for n in notices] == [EXTRAS_OFF]
    assert "spaCy" in EXTRAS_OFF and "fastembed" in EXTRAS_OFF and "offline" in EXTRAS_OFF
