"""The example experiments in examples/ are valid specs that name what their comments promise."""

from pathlib import Path

import pytest

from lyra_lab import ConfigError
from lyra_lab.backends import context_window
from lyra_lab.experiments import ExperimentSpec
from lyra_lab.experiments.grid import spec_label
from tests.helpers.locomo import locomo_path

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.name)
def test_example_parses(path):
    if "dataset:locomo" in path.read_text(encoding="utf-8"):
        locomo_path()  # skips, naming `lyra-lab datasets get locomo`, when it is not installed
    spec = ExperimentSpec.from_toml(path)
    assert spec.pipelines and spec.recallers


def test_rollup_example_compares_every_budgeted_rollup_with_keep_everything():
    spec = ExperimentSpec.from_toml(EXAMPLES / "rollups_local.toml")
    rollups = {p.kind_names()["rollup"] for p in spec.pipelines}
    assert rollups == {"none", "time_ladder", "summary_buffer", "session_gist"}
    assert spec.corpus.path.exists()


def test_locomo_example_points_at_the_installed_file():
    installed = locomo_path()
    spec = ExperimentSpec.from_toml(EXAMPLES / "locomo_recall.toml")
    assert spec.corpus.path == installed
    assert [label for label, _ in spec.recallers][:3] == ["dense", "bm25", "hybrid"]


def test_without_locomo_the_example_names_the_command_that_installs_it(tmp_path, monkeypatch):
    monkeypatch.setenv("LYRA_LOCOMO", str(tmp_path / "missing.json"))
    with pytest.raises(ConfigError) as err:
        ExperimentSpec.from_toml(EXAMPLES / "locomo_recall.toml")
    message = str(err.value)
    assert message.startswith("[corpus] path 'dataset:locomo': locomo10.json (locomo) not found")
    assert "`lyra-lab datasets get locomo`" in message and "\n" not in message


def test_the_locomo_split_example_has_the_ceilings_no_judge_and_locomos_scorer():
    locomo_path()
    spec = ExperimentSpec.from_toml(EXAMPLES / "locomo_split.toml")
    assert [label for label, _ in spec.recallers] == ["bm25", "dense", "hybrid", "oracle", "full_context"]
    assert spec.qa.enabled and spec.qa.scorer == "locomo" and not spec.qa.judges  # F1, LoCoMo's rule
    assert list(spec.embedders) == ["e5"] and [spec_label(b) for b in spec.backends] == ["local"]
    # the first 2 sessions of each conversation, whose whole history fits full_context's room in this window
    assert spec.corpus.max_sessions == 2 and context_window(spec.backends[0]) == 4096
