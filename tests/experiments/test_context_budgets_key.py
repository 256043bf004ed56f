"""[run] context_budgets: equal-budget scoring sizes, validated at the edge and recorded in spec.json."""

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.experiments import ExperimentSpec

BASE = {"corpus": {"path": "c.jsonl"}, "grid": {"chunkers": ["turn_window"]}}


def spec(**run):
    return ExperimentSpec.from_dict({**BASE, "run": run})


def test_default_budgets_and_spec_json():
    assert spec().context_budgets == (256, 512, 1024)
    assert spec().to_dict()["context_budgets"] == [256, 512, 1024]


def test_budgets_are_sorted_deduplicated_and_can_be_turned_off():
    assert spec(context_budgets=[1024, 256, 256]).context_budgets == (256, 1024)
    assert spec(context_budgets=512).context_budgets == (512,)
    assert spec(context_budgets=[]).context_budgets == ()


@pytest.mark.parametrize("bad", [[0], [-5], ["512"], [True], [1.5]])
def test_bad_budgets_fail_naming_the_key(bad):
    with pytest.raises(ConfigError, match=r"\[run\] context_budgets"):
        spec(context_budgets=bad)
