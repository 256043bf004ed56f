"""recall-eval --conversations: the first N, a 1-based range, or a list of positions and ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lyra_lab.cli import main

SYNTHETIC = Path(__file__).resolve().parents[2] / "datasets" / "synthetic_small.jsonl"
BM25 = ["--recaller", "bm25", "--embedder", "none", "--json"]


def _conversations(capsys, selector: str) -> set[str]:
    assert main(["recall-eval", str(SYNTHETIC), "--conversations", selector, *BM25]) == 0
    return {p["conversation_id"] for p in json.loads(capsys.readouterr().out)["probes"]}


@pytest.mark.parametrize(("selector", "expected"), [
    ("1", {"syn-0"}),            # the first N, as before
    ("2-2", {"syn-1"}),          # a 1-based range
    ("2", {"syn-0", "syn-1"}),   # the first two
    ("syn-1", {"syn-1"}),        # an id
    ("2,syn-0", {"syn-0", "syn-1"}),
])
def test_selectors(capsys, selector, expected):
    assert _conversations(capsys, selector) == expected


@pytest.mark.parametrize("selector", ["3-4", "syn-9", "0", ","])
def test_a_selector_naming_no_conversation_is_one_line_and_exit_2(capsys, selector):
    assert main(["recall-eval", str(SYNTHETIC), "--conversations", selector, *BM25]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--conversations" in err
