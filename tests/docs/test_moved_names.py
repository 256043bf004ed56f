"""Public names are promises: a name of the last two releases imports from its old home, warning where it went.

``previous_api.txt`` is every public name of the two releases before this one (the packages'
``__all__``, frozen from git history); each one still imports from its package, or is a moved
name (``lyra_lab._moved.MOVED``: the same object, with a ``DeprecationWarning`` naming its new
home), or is listed as removed with what replaces it (``GONE``: an ``ImportError`` saying so).
``run_experiment``'s keywords of the last release still run, with a warning naming
``RunOptions`` and ``Injected``.
"""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path

import pytest

from lyra_lab import _moved
from lyra_lab.backends import FakeLLM
from lyra_lab.experiments import ExperimentSpec, run_experiment
from lyra_lab.replay import Registries

HERE = Path(__file__).resolve().parent
PREVIOUS = [tuple(line.split()) for line in (HERE / "previous_api.txt").read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]
MOVED = [(old, name, new) for old, names in _moved.MOVED.items() for name, new in names.items()]
GONE = [(old, name, instead) for old, names in _moved.GONE.items() for name, instead in names.items()]
SYNTHETIC = HERE.parents[1] / "datasets" / "synthetic_small.jsonl"


def test_every_name_of_the_last_two_releases_is_current_moved_or_said_to_be_gone():
    moved = {(old, name) for old, name, _ in MOVED}
    gone = {(old, name) for old, name, _ in GONE}
    lost = []
    for module, name in PREVIOUS:
        if (module, name) in moved or (module, name) in gone:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)  # a current name imports without a warning
            if not hasattr(importlib.import_module(module), name):
                lost.append(f"{module}.{name}")
    assert not lost, f"gone without a word: {lost} (add them to lyra_lab._moved.MOVED or GONE)"
    assert len(PREVIOUS) > 300 and len(moved) >= 86  # the list is the releases' API (evaluate alone had 86)


@pytest.mark.parametrize("old, name, new", MOVED, ids=[f"{o}.{n}" for o, n, _ in MOVED])
def test_a_moved_name_imports_from_its_old_home_with_a_warning_naming_the_new_one(old, name, new):
    home, new_name = _moved.new_home(new, name)  # a renamed name says "home:new name"
    with pytest.warns(DeprecationWarning, match=rf"{old}\.{name} moved to {home}\.{new_name};"):
        namespace: dict[str, object] = {}
        exec(f"from {old} import {name}", namespace)  # noqa: S102 - the statement a user's script has
    assert namespace[name] is getattr(importlib.import_module(home), new_name)
    assert name not in getattr(importlib.import_module(old), "__all__", [])  # not offered as current


@pytest.mark.parametrize("old, name, instead", GONE, ids=[f"{o}.{n}" for o, n, _ in GONE])
def test_a_removed_name_says_what_to_use_instead(old, name, instead):
    with pytest.raises(ImportError, match=f"{old}.{name} was removed; use"):
        exec(f"from {old} import {name}", {})  # noqa: S102


def test_an_unknown_name_is_still_an_ordinary_attribute_error():
    import lyra_lab.experiments as experiments

    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        experiments.no_such_name  # noqa: B018


def test_the_readme_of_the_last_release_still_runs_its_imports():
    with pytest.warns(DeprecationWarning, match="lyra_lab.runs.load_results"):
        from lyra_lab.experiments import load_results  # noqa: F401
    with pytest.warns(DeprecationWarning, match="lyra_lab.stats.aggregate"):
        from lyra_lab.evaluate import aggregate  # noqa: F401


def _spec() -> ExperimentSpec:
    return ExperimentSpec.from_dict({
        "name": "legacy", "corpus": {"path": str(SYNTHETIC), "conversations": 1, "max_sessions": 2},
        "grid": {"chunkers": [{"name": "turn_window", "max_turns": 8}], "summarizers": ["single_pass"],
                 "recallers": ["bm25"]},
        "run": {"backends": ["mine"], "embedders": ["hashing"], "ks": [5], "score_at_tokens": [256]}})


def test_run_experiment_with_the_keywords_of_the_last_release_runs_and_names_the_new_form(tmp_path):
    mine = FakeLLM(name="mine")
    with pytest.warns(DeprecationWarning, match=r"RunOptions\(progress=False\).*Injected\(backends=\.\.\.\)"):
        df = run_experiment(_spec(), tmp_path / "run", progress=False, backends={"mine": mine})
    assert len(df) and mine.calls and set(df["backend"]) == {"mine"}
    calls = len(mine.calls)
    with pytest.warns(DeprecationWarning, match=r"RunOptions\(resume=True, progress=False\)"):
        run_experiment(_spec(), tmp_path / "run", True, False, backends={"mine": mine})  # old positionals
    assert len(mine.calls) == calls  # resumed: the same run
    with pytest.warns(DeprecationWarning, match=r"RunOptions\(resume=False"):
        run_experiment(_spec(), tmp_path / "run", resume=False, progress=False, backends={"mine": mine})
    assert len(mine.calls) == 2 * calls  # started over


def test_run_experiment_with_registries_reads_the_toml_with_them(tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text(f'name = "legacy"\n[corpus]\npath = "{SYNTHETIC}"\nconversations = 1\nmax_sessions = 1\n'
                    '[grid]\nchunkers = [{ name = "turn_window", max_turns = 8 }]\nsummarizers = ["none"]\n'
                    'recallers = ["bm25"]\n', encoding="utf-8")
    with pytest.warns(DeprecationWarning, match=r"ExperimentSpec\.from_toml\(path, registries\)"):
        df = run_experiment(path, tmp_path / "run", progress=False, registries=Registries.default())
    assert len(df)


def test_run_experiment_refuses_a_keyword_it_never_had(tmp_path):
    with pytest.raises(TypeError, match="unexpected keyword argument 'progres'"):
        run_experiment(_spec(), tmp_path / "run", progres=False)
