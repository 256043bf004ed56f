"""`lyra-lab probes plant|draft`: files that load back, counts printed, remote text only with consent, cached re-runs."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta

import pytest

import lyra_lab
import lyra_lab.backends
from lyra_lab.backends import FakeLLM
from lyra_lab.cli import main

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def write_export(path, sessions: int = 8):
    """A generic-JSONL export: one session every five days, two exchanges each."""
    lines = []
    for s in range(sessions):
        at = T0 + timedelta(days=5 * s)
        for k, (role, text) in enumerate([("user", f"Can you help me plan week {s} of my running schedule?"),
                                          ("assistant", "Sure: three easy runs and one longer one."),
                                          ("user", "My coach Priya says I should rest on Fridays."),
                                          ("assistant", "Rest days matter, Friday works well.")]):
            lines.append({"session_id": f"c{s}", "role": role, "content": text, "id": f"x{s}-{k}",
                          "timestamp": (at + timedelta(minutes=k)).isoformat()})
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n", encoding="utf-8")
    return path


def test_plant_writes_a_corpus_that_loads_back_with_its_probes(tmp_path, capsys):
    export = write_export(tmp_path / "export.jsonl")
    out = tmp_path / "planted.jsonl"
    assert main(["probes", "plant", str(export), "--n", "12", "--seed", "1", "--out", str(out)]) == 0
    printed = " ".join(capsys.readouterr().out.split())  # as read, across the terminal's wrapped lines
    assert "12 planted probes" in printed and "planted sessions" in printed
    corpus = lyra_lab.load(out)
    assert len(corpus.probes) == 12 and all(p.meta["planted"] for p in corpus.probes)
    assert main(["probes", "plant", str(export), "--kinds", "gossip", "--out", str(out)]) == 2


class Remote(FakeLLM):
    """A fake that declares a remote endpoint, as a cloud backend would."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.capabilities = dataclasses.replace(self.capabilities, endpoint="https://api.example.com/v1")


REPLY = json.dumps({"question": "Who is my coach?", "answer": "Priya", "turns": [3]})


@pytest.fixture
def fake_backend(monkeypatch):
    made = []

    def make(spec, cls=FakeLLM):
        made.append(cls(respond=lambda messages: REPLY) if spec == "fake" else Remote(respond=lambda m: REPLY))
        return made[-1]

    monkeypatch.setattr(lyra_lab.backends, "make_backend", make)
    return made


def test_draft_keeps_checked_probes_and_a_rerun_pays_nothing(tmp_path, capsys, fake_backend):
    export = write_export(tmp_path / "export.jsonl")
    out = tmp_path / "drafts.jsonl"
    args = ["probes", "draft", str(export), "--backend", "fake", "--sessions", "3", "--out", str(out)]
    assert main(args) == 0
    printed = " ".join(capsys.readouterr().out.split())  # as read, across the terminal's wrapped lines
    assert "kept 1 of 3 drafted" in printed and "dropped 2: near-duplicate" in printed
    assert len(fake_backend[0].calls) == 3
    probes = lyra_lab.load_probes(out, lyra_lab.load(export))
    assert [(p.answer, p.meta["prompt"]) for p in probes] == [("Priya", "draft_questions_v1")]
    assert main(args) == 0
    assert fake_backend[1].calls == [] and "3 answered from the cache" in capsys.readouterr().out
    assert out.read_text() == (tmp_path / "drafts.jsonl").read_text()


def test_draft_to_a_remote_endpoint_needs_consent(tmp_path, capsys, fake_backend):
    export = write_export(tmp_path / "export.jsonl")
    out = tmp_path / "drafts.jsonl"
    args = ["probes", "draft", str(export), "--backend", "remote", "--sessions", "2", "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "notice: drafting sends the text" in err and "api.example.com" in err and "--yes" in err
    assert fake_backend[0].calls == [] and not out.exists()
    assert main([*args, "--yes"]) == 0 and len(fake_backend[1].calls) == 2
