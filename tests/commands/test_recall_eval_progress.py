"""``lyra-lab recall-eval`` reports progress while it works, off a terminal as ``lyra-lab run`` does.

Off a terminal (stderr here is not one) the run's heartbeat prints a status line every ``EVERY_S``
seconds (10 s; shortened here) with the cells done of all, the stage running and, once a cell is
done, the run's ETA; the same beats go to the run log as ``progress`` events.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np

import lyra_lab.backends
from lyra_lab.backends import HashingEmbedder
from lyra_lab.cli import main
from lyra_lab.experiments.executors import _heartbeat

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "locomo_mini.json"  # 2 conversations


class SlowEmbedder(HashingEmbedder):
    """A hashing embedder that takes 0.05 s a call, so each cell lasts several beats."""

    def embed(self, texts, kind="passage") -> np.ndarray:
        time.sleep(0.05)
        return super().embed(texts, kind)


def test_recall_eval_prints_status_lines_with_counts_and_an_eta_and_logs_them(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(_heartbeat, "EVERY_S", 0.02)
    monkeypatch.setattr(lyra_lab.backends, "make_embedder", lambda spec, cache=None: SlowEmbedder(32))
    # two conversations that both ask questions (locomo_mini's second asks none that count, so its cell ends
    # within a few ms and a beat showing the run's ETA during it would be a race)
    first = json.loads(CORPUS.read_text(encoding="utf-8"))[0]
    corpus = tmp_path / "two.json"
    corpus.write_text(json.dumps([first, {**first, "sample_id": f"{first['sample_id']}-again"}]), encoding="utf-8")
    out = tmp_path / "run"
    assert main(["recall-eval", str(corpus), "--recaller", "dense", "--embedder", "hashing", "--k", "5",
                 "--out", str(out)]) == 0
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if "recall-eval: " in line]
    counts = {m.groups() for line in lines if (m := re.search(r"recall-eval: (\d)/(\d) cells", line))}
    assert counts and {total for _, total in counts} == {"2"}  # both conversations, one count
    assert any(" · recall: " in line or " · store: " in line or "embed" in line for line in lines)
    assert any("run ETA " in line for line in lines)  # once the first conversation is done
    assert not any("summarize" in line for line in lines)  # raw turns: no summarizer runs
    assert "recall-eval  recaller=dense" in captured.out  # the result as before
    beats = [e for e in map(json.loads, (out / "log.jsonl").read_text(encoding="utf-8").splitlines())
             if e["event"] == "progress" and e.get("source") == "heartbeat"]
    assert beats and all(e["cells_total"] == 2 for e in beats)


class _Stderr:
    """A stderr that is a terminal of ``columns`` columns."""

    def __init__(self, columns: int):
        self.columns = columns

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        return 2


def test_bars_show_only_on_a_terminal_with_a_width(monkeypatch):
    import os
    import sys

    from lyra_lab.commands._checks import bars_show

    assert not bars_show()  # pytest's stderr is no terminal
    for columns, shown in ((0, False), (120, True)):
        monkeypatch.setattr(sys, "stderr", _Stderr(columns))
        monkeypatch.setattr(os, "get_terminal_size", lambda fd, c=columns: os.terminal_size((c, 24)))
        assert bars_show() is shown
