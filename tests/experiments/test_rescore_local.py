"""A rescore that pays 0 calls starts no server: an export of a run on the real ``local`` preset
(llama.cpp serving the bundled SmolLM2), every answer in its response cache.

Starting is observed where the preset starts a server (``ensure_local_server``, ``LocalServer.start``):
the rescore and its plan call neither, and rebuild the export's rows; a judge added at rescore is a
cache miss, which starts (here: attaches to) the server once and is answered.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lyra_lab.backends import _local_server
from lyra_lab.cli import main
from lyra_lab.experiments import Changes, ExperimentSpec, RunOptions, rescore, rescore_plan, run_experiment
from lyra_lab.runs import export_run, load_results, read_log

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
EXPERIMENT = """
name = "local-answers"
[corpus]
path = "{corpus}"
conversations = 1
max_sessions = 3
[grid]
chunkers = [{{ name = "turn_window", max_turns = 8 }}]
summarizers = ["none"]
recallers = ["bm25"]
[run]
backends = ["local"]
embedders = ["hashing"]
ks = [1]
[qa]
enabled = true
max_probes = 2
max_tokens = 8
"""


@pytest.fixture
def starts(monkeypatch):
    """Each start of a local server asked for (the real ones run: the session's server is attached to)."""
    asked: list[str] = []
    ensure, start = _local_server.ensure_local_server, _local_server.LocalServer.start

    def ensure_spy(*args, **kwargs):
        asked.append("ensure_local_server")
        return ensure(*args, **kwargs)

    def start_spy(self):
        asked.append("LocalServer.start")
        return start(self)

    monkeypatch.setattr(_local_server, "ensure_local_server", ensure_spy)
    monkeypatch.setattr(_local_server.LocalServer, "start", start_spy)
    return asked


def _started(run_dir: Path) -> object:
    done = [e for e in read_log(run_dir / "log.jsonl") if e["event"] == "run_done"]
    return done[-1]["backends"]["local"]["started"]


def test_a_rescore_of_a_local_run_answered_from_the_file_starts_no_server(local_server, tmp_path, monkeypatch,
                                                                         capsys, starts):
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "first-machine"))
    experiment = tmp_path / "local.toml"
    experiment.write_text(EXPERIMENT.format(corpus=REPO / "datasets" / "synthetic_small.jsonl"))
    rows = run_experiment(ExperimentSpec.from_toml(experiment), tmp_path / "run", RunOptions(progress=False))
    answers = int(((rows["metric"] == "qa_f1") & (rows["probe_id"] != "")).sum())
    assert answers > 0 and starts  # the run asked for the server
    assert main(["plan", str(experiment), "--run-dir", str(tmp_path / "run")]) == 0  # a finished run's plan
    out = tmp_path / "local.zip"
    export_run(tmp_path / "run", out)
    shutil.rmtree(tmp_path / "run")
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "second-machine"))
    starts.clear()

    assert main(["rescore", str(out), "--run-dir", str(tmp_path / "planned"), "--plan"]) == 0
    assert "new: 0 LLM calls" in capsys.readouterr().out
    result = rescore(out, tmp_path / "again")
    assert starts == []  # neither the plans nor the rescore started (or attached to) a server
    assert result.total_paid == 0 and result.compared and result.differences == ()
    assert _started(tmp_path / "again") is False

    def qa(df):
        return df[df["metric"] == "qa_f1"].set_index(["cell_id", "pipeline", "probe_id"])["value"].sort_index()

    assert qa(load_results(tmp_path / "again")).equals(qa(rows))

    # a judge on the local model: calls the file lacks start the server, once, and are answered
    changes = Changes(judges=({"prompt": "correct_wrong_v1", "backend": "local", "controls": False},))
    plan = rescore_plan(out, tmp_path / "judged-plan", changes)
    assert starts == [] and plan.new_calls > 0
    judged = rescore(out, tmp_path / "judged", changes)
    assert starts == ["ensure_local_server"]  # the session's server is attached to, not started again
    assert judged.paid_calls["judge"] == plan.new_calls
    assert len(judged.rows[judged.rows["metric"] == "judge"]) == answers
    assert _started(tmp_path / "judged") is True
