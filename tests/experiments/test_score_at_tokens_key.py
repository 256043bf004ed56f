"""[run] score_at_tokens (equal-budget scoring sizes) and [grid] context_tokens (the context a pipeline renders):
validated at the edge, recorded in spec.json, and the old shared name refused with the new one."""

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.experiments import ExperimentSpec

BASE = {"corpus": {"path": "c.jsonl"}, "grid": {"chunkers": ["turn_window"]}}


def spec(grid=None, **run):
    return ExperimentSpec.from_dict({**BASE, "grid": {**BASE["grid"], **(grid or {})}, "run": run})


def test_default_budgets_and_spec_json():
    assert spec().context_budgets == (256, 512, 1024)
    assert spec().to_dict()["context_budgets"] == [256, 512, 1024]


def test_budgets_are_sorted_deduplicated_and_can_be_turned_off():
    assert spec(score_at_tokens=[1024, 256, 256]).context_budgets == (256, 1024)
    assert spec(score_at_tokens=512).context_budgets == (512,)
    assert spec(score_at_tokens=[]).context_budgets == ()


@pytest.mark.parametrize("bad", [[0], [-5], ["512"], [True], [1.5]])
def test_bad_budgets_fail_naming_the_key(bad):
    with pytest.raises(ConfigError, match=r"\[run\] score_at_tokens"):
        spec(score_at_tokens=bad)


def test_context_tokens_sizes_each_pipelines_own_context():
    pipelines = spec({"context_tokens": [300, 600]}).pipelines
    assert sorted(p.context_budget for p in pipelines) == [300, 600]
    assert {p.context_budget for p in spec().pipelines} == {1000}


@pytest.mark.parametrize("table, new", [("grid", "context_tokens"), ("run", "score_at_tokens")])
def test_the_old_name_is_one_line_naming_the_new_key(table, new):
    data = {**BASE, table: {**BASE.get(table, {}), "context_budgets": [400]}}
    with pytest.raises(ConfigError) as caught:
        ExperimentSpec.from_dict(data)
    message = str(caught.value)
    assert message.startswith(f"[{table}] context_budgets is now {new}: ") and "\n" not in message
