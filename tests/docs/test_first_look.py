"""The README's way to cut a first look down works on an export that imports as one conversation.

The bundled Claude export, with probes planted, is one conversation of 12 sessions: ``[corpus]
conversations = N`` keeps all of it, ``[corpus] max_sessions`` (the README's advice) keeps the first
sessions and the probes on them, so the plan has fewer turns to embed and still probes to ask.
"""

from __future__ import annotations

import re
from pathlib import Path

from lyra_lab.cli import main
from lyra_lab.experiments import ExperimentSpec, load_corpus, select

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = ROOT / "tests" / "fixtures" / "corpus" / "claude" / "conversations.json"


def test_max_sessions_cuts_a_one_conversation_export_and_keeps_probes(tmp_path, capsys):
    assert main(["import", str(CLAUDE), "--out", str(tmp_path / "me.jsonl")]) == 0
    assert main(["probes", "plant", str(tmp_path / "me.jsonl"), "--n", "20",
                 "--out", str(tmp_path / "planted.jsonl")]) == 0
    capsys.readouterr()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    advice = re.search(r"`\[corpus\] (max_sessions = \d+)` cuts a\s+first look down", readme)
    assert advice, "the README's first-look advice moved"
    grid = re.findall(r"```toml\n(.*?)```", readme[readme.index("## A tour"):], flags=re.S)[0]
    (tmp_path / "my_grid.toml").write_text(grid, encoding="utf-8")
    cut = grid.replace('path = "planted.jsonl"', f'path = "planted.jsonl"\n{advice.group(1).replace("10", "2")}')
    (tmp_path / "look.toml").write_text(cut, encoding="utf-8")

    whole = ExperimentSpec.from_toml(tmp_path / "my_grid.toml")
    corpus = load_corpus(whole.corpus)
    assert len(corpus.conversations) == 1  # what `conversations = N` cannot cut
    look = ExperimentSpec.from_toml(tmp_path / "look.toml")
    full, small = select(corpus, whole.corpus).corpus, select(corpus, look.corpus).corpus
    turns = [sum(len(s.turns) for c in x.conversations for s in c.sessions) for x in (full, small)]
    assert turns[1] < turns[0] / 3 and 0 < len(small.probes) < len(full.probes)
