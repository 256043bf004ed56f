"""The probe review notebook (source notebooks/03_probe_review.py) runs headless and saves accepted probes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import nbformat
import pytest

import lyra_lab
from lyra_lab.backends import FakeLLM
from lyra_lab.synthetic import generate_synthetic
from lyra_lab.probes import draft_probes, save_probes

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"


def built_notebook():
    # the committed notebook, which tests/notebooks/test_notebook_files.py keeps equal to its source
    return nbformat.read(NOTEBOOKS / "03_probe_review.ipynb", as_version=4)


def execute(nb, tmp_path, monkeypatch, **env):
    for name in ("nbclient", "ipykernel"):
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"needs {name}")
    from nbclient import NotebookClient

    for key, value in env.items():
        monkeypatch.setenv(key, str(value))
    monkeypatch.setenv("LYRA_PROBE_REVIEW_OUT", str(tmp_path / "out"))
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]


def test_review_notebook_saves_the_accepted_drafts(tmp_path, monkeypatch):
    corpus = generate_synthetic(1, conversations=1, sessions=4, months=1, single_facts=3, updated_facts=0,
                                temporal=0, multi_hop=0, abstention=0)
    corpus_path = corpus.save(tmp_path / "corpus.jsonl")

    def respond(messages):  # a question about the last word of the first user turn in the prompt
        first = next(line for line in messages[-1]["content"].splitlines() if line.startswith("[1] user: "))
        word = first.split()[-1].strip(".!?,")
        return json.dumps({"question": "Which word ended what I said first?", "answer": word, "turns": [1]})

    result = draft_probes(corpus, FakeLLM(respond=respond), sessions=1)
    assert len(result.probes) == 1
    drafts = save_probes(result.probes, tmp_path / "drafts.jsonl")
    errors = execute(built_notebook(), tmp_path, monkeypatch, LYRA_PROBE_REVIEW_CORPUS=corpus_path,
                     LYRA_PROBE_REVIEW_DRAFTS=drafts)
    assert errors == []
    accepted = lyra_lab.load_probes(tmp_path / "out" / "accepted_probes.jsonl", lyra_lab.load(corpus_path))
    assert [(p.id, p.answer, p.evidence) for p in accepted] == [(p.id, p.answer, p.evidence) for p in result.probes]


def test_review_notebook_in_small_mode_rejects_one_stand_in(tmp_path, monkeypatch):
    assert execute(built_notebook(), tmp_path, monkeypatch) == []
    lines = (tmp_path / "out" / "accepted_probes.jsonl").read_text().splitlines()
    assert len(lines) == 5
