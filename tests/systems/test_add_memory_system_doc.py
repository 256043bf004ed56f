"""docs/architecture.md's "Add a memory system" snippet runs as written and its system lands in the grid's rows.

The snippet registers a system in ``SYSTEMS`` (process-wide), so it runs in a child process, in a folder of
its own where ``datasets/`` is the repository's and ``runs/`` is the test's.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from lyra_lab.experiments import ExperimentSpec, RunOptions, run_experiment
from lyra_lab.runs import load_results
from tests.systems.conftest import REPO, SYNTHETIC

DOC = REPO / "docs" / "architecture.md"


def snippet() -> str:
    section = DOC.read_text(encoding="utf-8").split("## Add a memory system", 1)[1].split("\n## ", 1)[0]
    [code] = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    return code


def test_the_snippet_is_short_and_names_the_protocol_and_the_registration():
    code = snippet()
    lines = [line for line in code.splitlines() if line.strip()]
    assert len(lines) <= 30
    assert "SYSTEMS.register(" in code and "def _ingest(" in code and "def _query(" in code
    assert '"systems": [' in code


def test_the_snippet_runs_and_its_system_is_a_pipeline_of_the_grid(tmp_path):
    (tmp_path / "datasets").symlink_to(REPO / "datasets")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", snippet()], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = load_results(tmp_path / "runs" / "shared-words")
    assert set(rows["pipeline"]) == {"shared_words"}
    probes = rows[rows["probe_id"] != ""]
    conversations = rows[rows["probe_id"] == ""].pivot_table(index="conversation_id", columns="metric",
                                                               values="value")
    assert (conversations["ingest.items"] == conversations["ingest.turns"]).all()  # what _ingest said it stored
    assert probes[probes["metric"] == "evidence_recall@10"]["value"].mean() > 0  # its turn_ids are traced
    # the same per-probe metric names as a lyra-lab pipeline of raw turns over the same probes
    spec = ExperimentSpec.from_dict({"corpus": {"path": str(SYNTHETIC)}, "grid": {
        "chunkers": [{"name": "turn_window", "max_turns": 1}], "keep_raw": [False], "recallers": ["bm25"]},
        "run": {"embedders": ["hashing"], "cache": "off"}})
    pipeline = run_experiment(spec, tmp_path / "bm25", RunOptions(progress=False))
    pipeline_metrics = set(pipeline.loc[pipeline["probe_id"] != "", "metric"])
    assert set(probes["metric"]) == pipeline_metrics
