"""The example experiments in examples/ are valid specs that name what their comments promise."""

from pathlib import Path

import pytest

from lyra_lab.experiments import ExperimentSpec

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.name)
def test_example_parses(path):
    spec = ExperimentSpec.from_toml(path)
    assert spec.pipelines and spec.recallers


def test_rollup_example_compares_every_budgeted_rollup_with_keep_everything():
    spec = ExperimentSpec.from_toml(EXAMPLES / "rollups_local.toml")
    rollups = {p.kind_names()["rollup"] for p in spec.pipelines}
    assert rollups == {"none", "time_ladder", "summary_buffer", "session_gist"}
    assert spec.corpus.path.exists()


def test_locomo_example_points_at_the_shared_file():
    spec = ExperimentSpec.from_toml(EXAMPLES / "locomo_recall.toml")
    assert spec.corpus.path.name == "locomo10.json"
    assert [label for label, _ in spec.recallers][:3] == ["dense", "bm25", "hybrid"]
