"""Experiment files: the grid is the product of its lists; unknown keys fail loudly, by name and table."""

from __future__ import annotations

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.experiments import ExperimentSpec, pipeline_labels


def test_the_grid_is_the_product_of_the_memory_lists_and_recallers_are_not_multiplied(write_toml, registries,
                                                                                      tmp_path):
    spec = ExperimentSpec.from_toml(write_toml(), registries)
    assert spec.name == "tiny"
    assert len(spec.pipelines) == 4  # 2 chunkers x 2 summarizers; recallers share each memory
    assert [label for label, _ in spec.recallers] == ["dense", "bm25", "hybrid"]
    assert spec.corpus.path == (tmp_path / "tiny.jsonl").resolve()  # relative to the TOML file
    assert spec.ks == (1, 3) and spec.backends == ("fake",) and spec.cache == "off"
    labels = sorted(pipeline_labels(spec.pipelines).values())
    assert labels == ["token_budget+concat+none", "token_budget+per_chunk+none",
                      "turn_window+concat+none", "turn_window+per_chunk+none"]
    resolved = spec.to_dict()
    chunker = resolved["pipelines"][0]["chunker"]
    assert chunker["name"] == "turn_window" and chunker["max_turns"] == 2
    assert len(chunker) > 2  # defaults are resolved and recorded too
    assert resolved["recallers"][2]["method"] == "rrf" and "rrf_k" in resolved["recallers"][2]


@pytest.mark.parametrize("extra, key, table", [
    ("colour = 'blue'\n", "colour", "the top level"),
    ("[qa]\nenabled = true\nanswer_style = 'short'\n", "answer_style", "[qa]"),
])
def test_unknown_keys_name_the_key_and_the_table(write_toml, registries, extra, key, table):
    text = extra + open(write_toml()).read() if "colour" in extra else None
    path = write_toml(text) if text else write_toml(extra=extra)
    with pytest.raises(ConfigError) as err:
        ExperimentSpec.from_toml(path, registries)
    assert repr(key) in str(err.value) and table in str(err.value)


@pytest.mark.parametrize("table, line", [("corpus", "max_turns = 3"), ("grid", "chunker = []"),
                                         ("run", "backend = 'local'")])
def test_unknown_keys_inside_each_table(write_toml, registries, table, line):
    text = open(write_toml()).read().replace(f"[{table}]\n", f"[{table}]\n{line}\n")
    with pytest.raises(ConfigError, match=rf"unknown key '{line.split()[0]}' in table \[{table}\]"):
        ExperimentSpec.from_toml(write_toml(text), registries)


def test_unknown_strategy_names_and_parameters_fail_before_any_work(write_toml, registries):
    text = open(write_toml()).read()
    with pytest.raises(ConfigError, match="unknown key 'max_turnz'"):
        ExperimentSpec.from_toml(write_toml(text.replace("max_turns = 2", "max_turnz = 2")), registries)
    with pytest.raises(ConfigError, match="unknown recaller 'bm26'"):
        ExperimentSpec.from_toml(write_toml(text.replace('"bm25"', '"bm26"')), registries)
    with pytest.raises(ConfigError, match="unknown key 'methd'"):
        ExperimentSpec.from_toml(write_toml(text.replace('method = "rrf"', 'methd = "rrf"')), registries)


@pytest.mark.parametrize("old, new, message", [
    ("ks = [1, 3]", "ks = [0, 3]", "ks must be positive"),
    ("ks = [1, 3]", 'ks = "10"', 'got ks = "10"$'),  # as the file wrote it, not as a tuple of strings
    ("ks = [1, 3]", 'ks = [1, "5"]', r'got ks = \[1, "5"\]$'),  # mixed: one line, not a TypeError from sorting
    ('cache = "off"', 'cache = "sometimes"', "cache must be one of"),
    ("[run]", "[run]\nworkers = 0", "workers must be a positive integer"),
    ("[corpus]", "[corpus]\nmax_sessions = -1", "max_sessions must be a positive integer"),
    ('recallers = ["dense", "bm25", { name = "hybrid", method = "rrf" }]', 'recallers = ["dense", "dense"]',
     "same recaller twice"),
    ('path = "tiny.jsonl"', 'format = "auto"', "needs a 'path'"),
    ("[run]", "budgets = [0]\n[run]", "budget must be a positive integer"),
])
def test_bad_values_are_config_errors(write_toml, registries, old, new, message):
    text = open(write_toml()).read().replace(old, new, 1)
    with pytest.raises(ConfigError, match=message):
        ExperimentSpec.from_toml(write_toml(text), registries)


def test_judges_need_qa_and_the_old_judge_table_is_one_line(write_toml, registries):
    judges = 'judges = [{ prompt = "correct_wrong_v1", backend = "fake" }]\n'
    with pytest.raises(ConfigError, match="needs \\[qa\\] enabled"):
        ExperimentSpec.from_toml(write_toml(extra="[qa]\nenabled = false\n" + judges), registries)
    with pytest.raises(ConfigError, match="the \\[judge\\] table is gone"):
        ExperimentSpec.from_toml(write_toml(extra="[qa]\nenabled = true\n[judge]\nenabled = true\n"), registries)
    spec = ExperimentSpec.from_toml(write_toml(extra="[qa]\nenabled = true\nmax_probes = 2\n"), registries)
    assert spec.qa.enabled and spec.qa.max_probes == 2 and spec.qa.judges == ()


def test_invalid_toml_is_a_config_error_naming_the_file(write_toml, registries):
    path = write_toml("name = \n")
    with pytest.raises(ConfigError, match="not valid TOML") as err:
        ExperimentSpec.from_toml(path, registries)
    assert str(path) in str(err.value)


def test_labels_tell_same_named_strategies_apart(write_toml, registries):
    text = open(write_toml()).read().replace(
        'recallers = ["dense", "bm25", { name = "hybrid", method = "rrf" }]',
        'recallers = [{ name = "hybrid", method = "rrf" }, { name = "hybrid", method = "weighted" }]').replace(
        '{ name = "token_budget", max_tokens = 40 }', '{ name = "turn_window", max_turns = 4 }')
    spec = ExperimentSpec.from_toml(write_toml(text), registries)
    assert [label for label, _ in spec.recallers] == ["hybrid[method=rrf]", "hybrid[method=weighted]"]
    assert sorted(set(pipeline_labels(spec.pipelines).values())) == [
        "turn_window[max_turns=2]+concat+none", "turn_window[max_turns=2]+per_chunk+none",
        "turn_window[max_turns=4]+concat+none", "turn_window[max_turns=4]+per_chunk+none"]


def test_varying_pipeline_settings_appear_in_labels(write_toml, registries):
    text = open(write_toml()).read().replace("[run]", "keep_raw = [true, false]\n[run]", 1)
    spec = ExperimentSpec.from_toml(write_toml(text), registries)
    labels = set(pipeline_labels(spec.pipelines).values())
    assert len(spec.pipelines) == 8 and len(labels) == 8
    assert "turn_window+concat+none+raw=no" in labels
