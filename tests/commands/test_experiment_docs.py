"""docs/experiment-file.md is generated from the code; regenerating it must give the committed file."""

from __future__ import annotations

import re
from pathlib import Path

from lyra_lab._docs import arg_docs, render

DOC = Path(__file__).resolve().parents[2] / "docs" / "experiment-file.md"


def test_committed_docs_match_the_code():
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/experiment-file.md is stale: run `python -m lyra_lab._docs > docs/experiment-file.md`")


def test_docs_cover_every_key_and_strategy():
    from lyra_lab.chunking import CHUNKERS
    from lyra_lab.experiments.grid._spec import TABLES
    from lyra_lab.recall import RECALLERS
    from lyra_lab.replay import TRIGGERS
    from lyra_lab.rollup import ROLLUPS
    from lyra_lab.summarize import SUMMARIZERS

    text = render()
    for table, keys in TABLES.items():
        if table:
            assert f"### [{table}]" in text
        for key in keys:
            assert f"| `{key}` |" in text
    for registry in (CHUNKERS, SUMMARIZERS, ROLLUPS, RECALLERS, TRIGGERS):
        for name in registry.names():
            assert f"#### `{name}`" in text
    for needed in ("model_path", "snap-research/LoCoMo", "data/locomo10.json", "xiaowu0162/LongMemEval",
                   "longmemeval_oracle.json", "Data controls", "Privacy → Export data", "ollama/<model>"):
        assert needed in text
    assert not re.search(r"(?<!`)``(?!`)", text)  # no RST literals (``` fences are fine)


def test_arg_docs_reads_google_style_sections():
    doc = """Summary.

    Args:
        a: first line
            continued.
        b, c: shared text.

    Returns:
        nothing: not an arg.
    """
    assert arg_docs(doc) == {"a": "first line continued.", "b": "shared text.", "c": "shared text."}
