"""``[corpus] include_attachments``: the experiment file's twin of ``lyra-lab import --no-attachments``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import FakeLLM
from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment
from lyra_lab.experiments.grid._select import load_corpus

CLAUDE = Path(__file__).parents[1] / "fixtures" / "corpus" / "claude" / "conversations.json"
GRID = """
name = "attachments"
[corpus]
path = "{path}"
{extra}
[grid]
chunkers = ["turn_window"]
recallers = ["bm25"]
[run]
backends = ["fake"]
embedders = ["none"]
ks = [1]
"""


def _spec(tmp_path, extra=""):
    path = tmp_path / "exp.toml"
    path.write_text(textwrap.dedent(GRID.format(path=CLAUDE, extra=extra)), encoding="utf-8")
    return ExperimentSpec.from_toml(path)


def test_the_corpus_section_can_leave_attachments_out(tmp_path):
    kept, left_out = _spec(tmp_path), _spec(tmp_path, "include_attachments = false")
    assert kept.to_dict()["corpus"]["include_attachments"] is True
    assert left_out.to_dict()["corpus"]["include_attachments"] is False
    # the fixture has one attachment, imported as its own turn
    assert [t.id for t in load_corpus(kept.corpus).turns() if t.meta.get("part")] == ["m3-cc:attachment:0"]
    assert [t.id for t in load_corpus(left_out.corpus).turns() if t.meta.get("part")] == []
    assert len(list(load_corpus(left_out.corpus).turns())) == len(list(load_corpus(kept.corpus).turns())) - 1


def test_a_non_boolean_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"\[corpus\] include_attachments must be true or false, got 'no'"):
        _spec(tmp_path, 'include_attachments = "no"')


def test_a_run_folder_from_before_the_key_resumes(tmp_path):
    """spec.json written before the key existed held its default: the same experiment, not a different one."""
    spec = _spec(tmp_path)
    run = tmp_path / "run"
    run_experiment(spec, run, None, Injected(backends={"fake": FakeLLM()}))
    saved = json.loads((run / "spec.json").read_text())
    del saved["corpus"]["include_attachments"]
    (run / "spec.json").write_text(json.dumps(saved))
    run_experiment(spec, run, None, Injected(backends={"fake": FakeLLM()}))  # no "different experiment spec"
    with pytest.raises(ConfigError, match="different experiment spec"):
        run_experiment(_spec(tmp_path, "include_attachments = false"), run, None, Injected(backends={"fake": FakeLLM()}))
