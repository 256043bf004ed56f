"""A grid on a simulated server lyra-lab started resumes after the server comes back on another port.

The simulated cloud listens on a free port, new at each start: a notebook that starts its own
server and runs the same spec again must find its run, not "a run of a different experiment
spec" (notebook 07 used to start that side over).  The server is known by what it serves
(``lyra_lab._served``) in the spec's fingerprint and the cell ids; a server serving something
else is another experiment.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lyra_lab.backends import SimulatedServer
from lyra_lab.experiments import ExperimentSpec, RunOptions, load_corpus, grid_cells, run_experiment
from lyra_lab._registry import ConfigError

SYNTHETIC = Path(__file__).resolve().parents[2] / "datasets" / "synthetic_small.jsonl"


def _spec(base_url: str) -> ExperimentSpec:
    return ExperimentSpec.from_dict({
        "name": "served", "corpus": {"path": str(SYNTHETIC), "conversations": 1, "max_sessions": 2},
        "grid": {"chunkers": [{"name": "turn_window", "max_turns": 8}],
                 "summarizers": [{"name": "single_pass", "max_tokens": 16}], "recallers": ["bm25"]},
        "run": {"backends": [{"preset": "simulated/gpt-4o-mini", "base_url": base_url}], "embedders": ["hashing"],
                "ks": [5], "score_at_tokens": [256]},
    })


def _cell_ids(spec: ExperimentSpec) -> list[str]:
    corpus = load_corpus(spec.corpus)
    return [c.cell_id for c in grid_cells(spec, corpus, "sha")]


def test_the_same_spec_on_two_ports_has_the_same_cell_ids_and_another_server_does_not():
    with SimulatedServer(seed=0) as one:
        ids = _cell_ids(_spec(one.base_url))
    with SimulatedServer(seed=0) as two, SimulatedServer(seed=1) as other:
        assert two.base_url != one.base_url
        assert _cell_ids(_spec(two.base_url)) == ids
        assert set(_cell_ids(_spec(other.base_url))).isdisjoint(ids)  # serves something else: other cells
    assert set(_cell_ids(_spec(one.base_url))).isdisjoint(ids)  # nobody here serves that port now: its address


def test_a_rerun_with_its_own_new_simulated_server_resumes_and_asks_it_nothing(tmp_path):
    folder = tmp_path / "run"
    with SimulatedServer(seed=0) as first:
        df = run_experiment(_spec(first.base_url), folder, RunOptions(progress=False))
        assert first.request_count > 0 and not df.attrs.get("failed_cells")
    spec_json = json.loads((folder / "spec.json").read_text())
    assert first.base_url in json.dumps(spec_json)  # the address is recorded as it was, beside what it served
    with SimulatedServer(seed=0) as again:
        resumed = run_experiment(_spec(again.base_url), folder, RunOptions(progress=False))
        assert again.request_count == 0  # every cell was finished: nothing asked again
    assert sorted(set(resumed["cell_id"])) == sorted(set(df["cell_id"]))
    with SimulatedServer(seed=1) as other, pytest.raises(ConfigError, match="different experiment spec"):
        run_experiment(_spec(other.base_url), folder, RunOptions(progress=False))


def test_a_child_process_names_the_parents_server_alike():
    """``lyra-lab run`` started from a notebook plans the cells the notebook's own resume plans."""
    import os
    import subprocess
    import sys

    code = ("import sys, json\nfrom tests.experiments.test_served_identity import _spec, _cell_ids\n"
            "print(json.dumps(_cell_ids(_spec(sys.argv[1]))))")
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")]))}
    with SimulatedServer(seed=0) as server:
        here = _cell_ids(_spec(server.base_url))
        done = subprocess.run([sys.executable, "-c", code, server.base_url], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads(done.stdout.strip().splitlines()[-1]) == here
    done = subprocess.run([sys.executable, "-c", code, server.base_url], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=120)
    assert set(json.loads(done.stdout.strip().splitlines()[-1])).isdisjoint(here)  # stopped: a plain address
