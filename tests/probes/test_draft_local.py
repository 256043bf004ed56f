"""Drafting with the bundled SmolLM2 on the synthetic corpus: the qa style keeps checked probes from real turns."""

from __future__ import annotations

from pathlib import Path

import pytest

import lyra_lab
from lyra_lab.matching import answer_retained
from lyra_lab.probes import REASONS, draft_probes
from lyra_lab.probes._checks import NO_DRAFT_REASONS

DATASET = Path(__file__).parents[2] / "datasets" / "synthetic_small.jsonl"


@pytest.mark.slow
def test_the_local_model_drafts_accepted_qa_probes(local_backend):
    corpus = lyra_lab.load(DATASET)
    result = draft_probes(corpus, local_backend, n=1, sessions=20, seed=0, style="qa")
    print(f"local drafting: kept {len(result.probes)} of {result.drafted} drafted; dropped {dict(result.dropped)}")
    no_reply = sum(v for k, v in result.dropped.items() if k in NO_DRAFT_REASONS)
    assert result.drafted == len(result.probes) + sum(result.dropped.values()) - no_reply
    assert set(result.dropped) <= set(REASONS)
    turns = {t.id: t for t in corpus.turns()}
    assert result.probes, "the local model kept no drafted probe"
    for p in result.probes:
        assert set(p.evidence) <= set(turns) and p.meta["model"]
        assert answer_retained(p.answer, " ".join(turns[e].text for e in p.evidence))
