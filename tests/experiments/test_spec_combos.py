"""Impossible grid combinations fail at spec time; provably identical pipelines are recorded as aliases."""

from __future__ import annotations

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.experiments import ExperimentSpec


def spec(grid: dict) -> ExperimentSpec:
    return ExperimentSpec.from_dict({"corpus": {"path": "x.jsonl"}, "grid": grid})


def test_tiered_over_chunks_only_is_a_config_error_naming_the_fix():
    with pytest.raises(ConfigError) as err:
        spec({"chunkers": [{"name": "turn_window", "max_turns": 4}], "summarizers": ["none"],
              "keep_raw": [False], "recallers": ["dense", "tiered"]})
    message = str(err.value)
    assert "'tiered'" in message and "keep_raw = false" in message and "chunk" in message
    assert "add a summarizer" in message and "keep_raw = true" in message


@pytest.mark.parametrize("grid", [
    {"summarizers": ["none"], "keep_raw": [True]},  # raw turns: tiers 2 and 3
    {"summarizers": ["single_pass"], "keep_raw": [False]},  # summaries: tier 1
    {"summarizers": ["none"], "keep_raw": [False], "recallers": [{"name": "tiered", "coarse_kinds": ["chunk"]}]},
])
def test_tiered_is_fine_when_it_has_something_to_read(grid):
    grid = {"chunkers": [{"name": "turn_window", "max_turns": 4}], "recallers": ["tiered"], **grid}
    assert spec(grid).pipelines


def test_pipelines_differing_only_in_unused_parameters_are_aliases():
    s = spec({"chunkers": [{"name": "turn_window", "max_turns": 4}, {"name": "token_budget", "max_tokens": 300}],
              "summarizers": ["single_pass", "map_reduce"], "rollups": ["none"], "budgets": [500, 900]})
    aliases = s.to_dict()["aliases"]
    assert len(s.pipelines) == 8  # still run: the grid is what the file says
    # single_pass: 2 chunkers x 2 budgets -> one memory, 3 aliases; map_reduce: 2 chunkers -> 2 aliases (budgets)
    assert len(aliases) == 3 + 2
    assert all("single_pass" in a["same_as"] or "map_reduce" in a["same_as"] for a in aliases)
    mr = [a for a in aliases if "map_reduce" in a["pipeline"]]
    assert all(a["because"] == ["budget is only read by a rollup, and rollup is none"] for a in mr)
    assert all(a["pipeline"].split("+")[0] == a["same_as"].split("+")[0] for a in mr)  # chunker matters there


def test_no_aliases_when_every_parameter_is_read():
    s = spec({"chunkers": [{"name": "turn_window", "max_turns": 4}, {"name": "token_budget", "max_tokens": 300}],
              "summarizers": ["map_reduce", "none"], "rollups": [{"name": "time_ladder"}], "budgets": [500, 900]})
    assert s.aliases == ()
