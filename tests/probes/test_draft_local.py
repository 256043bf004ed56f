"""Drafting with the bundled SmolLM2 on the synthetic corpus: it runs and accounts for every draft."""

from __future__ import annotations

from pathlib import Path

import pytest

import lyra_lab
from lyra_lab.probes import REASONS, draft_probes
from lyra_lab.probes._checks import NO_JSON

DATASET = Path(__file__).parents[2] / "datasets" / "synthetic_small.jsonl"


@pytest.mark.slow
def test_the_local_model_drafts_and_every_draft_is_kept_or_dropped_for_a_reason(local_backend):
    corpus = lyra_lab.load(DATASET)
    result = draft_probes(corpus, local_backend, n=20, sessions=3, seed=0, max_tokens=200)
    print(f"local drafting: kept {len(result.probes)} of {result.drafted} drafted; dropped {dict(result.dropped)}")
    assert result.calls == 3
    no_json = result.dropped.get(NO_JSON, 0)
    assert result.drafted == len(result.probes) + sum(result.dropped.values()) - no_json
    assert result.drafted or no_json  # every reply is either drafts or counted as holding none
    assert set(result.dropped) <= set(REASONS)
    turn_ids = {t.id for t in corpus.turns()}
    assert all(set(p.evidence) <= turn_ids and p.meta["model"] for p in result.probes)
