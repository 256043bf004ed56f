"""Every parameter of every registered strategy can be set from an experiment file and lands in spec.json.

The test walks the registries (``Registries.default()``) and every dataclass
field of every strategy: it writes an experiment file that sets the field to a
non-default value, reads it through the real loader (``ExperimentSpec.from_toml``),
and checks the value on the built strategy object and in the ``spec.json`` the
run folder writes.  The values come from the parameter declarations (choices,
bounds, type; ``EXAMPLES`` for what a declaration cannot say), so a new strategy
needs no entry here; a field for which none can be derived (and without a
``NOT_SETTABLE`` reason) fails the walk, so no knob can become unreachable
unnoticed.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap

import pytest

from lyra_lab._errors import ConfigError
from lyra_lab._params import Declared, declared
from lyra_lab.backends import FakeLLM
from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment
from lyra_lab.runs._folder import RunFolder
from lyra_lab.replay import Pipeline, Registries
from lyra_lab.runs import read_log
from lyra_lab.summarize import DEFAULT_PROMPTS

# grid key of each registry, and where the built strategy sits
KINDS = {"chunkers": "chunker", "summarizers": "summarizer", "rollups": "rollup", "triggers": "trigger",
         "recallers": "recaller"}

PROMPTS = {"single": "S: {transcript}{focus}"}
# Values no declaration can give (what a free-form check accepts, a table of templates), by parameter
# name: a new strategy reusing these parameters needs no entry here.
EXAMPLES: dict[str, object] = {"encoding": "cl100k_base", "prompts": PROMPTS}


def candidates(decl: Declared, default: object) -> list[object]:
    """Non-default values a parameter's declaration allows, as TOML gives them, most obvious first."""
    p = decl.param
    if decl.name in EXAMPLES:
        found: list[object] = [EXAMPLES[decl.name]]
    elif p.choices is not None:
        found = [c for c in p.choices if c != default and c is not None]
    elif decl.base is bool:
        found = [not default]
    elif decl.base is int:
        low = p.ge if p.ge is not None else (p.gt + 1 if p.gt is not None else 1)
        found = [int(low), int(low) * 10, 1000] if default is None else [default + 1, default - 1, default * 2]
    elif decl.base is float:
        found = [1.0, 10.0] if default is None else [default + 0.5, default / 2, default * 2]
    elif decl.base is tuple:
        found = [list(default[:-1]), list(default[1:]), list(default[:1])] if default else []
    elif decl.base is str:
        found = [f"a {decl.name}"]
    else:
        found = []
    return [v for v in found if plain(v) != plain(_as_plain(default))
            and not decl.check(tuple(v) if isinstance(v, list) else v)[1]]


def derived_values(kind: str, name: str, cls: type) -> dict[str, object]:
    """A valid non-default value for every declared parameter, together: each the first candidate that the
    strategy accepts beside the ones chosen before it (so checks relating two parameters hold)."""
    registry = getattr(Registries.default(), kind)
    defaults = {f.name: f.default for f in dataclasses.fields(cls)}
    values: dict[str, object] = {}
    for pname, decl in declared(cls).items():
        for value in candidates(decl, defaults[pname]):
            try:
                registry.build({"name": name, **values, pname: value})
            except ConfigError:
                continue
            values[pname] = value
            break
    return values


# (registry, strategy name, field) -> why an experiment file cannot set it.  Empty today: every field can.
NOT_SETTABLE: dict[tuple[str, str, str], str] = {}
# The memory pipeline's own settings: TOML table, key, value, Pipeline field
PIPELINE_VALUES = (("grid", "budgets", 900, "budget"), ("grid", "context_tokens", 300, "context_budget"),
                   ("grid", "keep_raw", False, "keep_raw"), ("run", "tokenizer", "cl100k_base", "tokenizer"))


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string takes JSON's escapes
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(value)


def inline(name: str, params: dict[str, object]) -> str:
    return toml_value({"name": name, **params})


def experiment(kind: str, name: str, params: dict[str, object]) -> str:
    """An experiment file whose one ``kind`` strategy is ``name`` with ``params``; the rest default."""
    grid = {"chunkers": inline("turn_window", {}), "summarizers": '"none"', "rollups": '"none"',
            "triggers": '"session_end"', "recallers": '"bm25"'}
    grid[kind] = inline(name, params)
    lines = "\n".join(f"{key} = [{value}]" for key, value in grid.items())
    return f'name = "walk"\n[corpus]\npath = "tiny.jsonl"\n[grid]\n{lines}\n[run]\nbackends = ["fake"]\n'


def built_strategy(spec: ExperimentSpec, kind: str):
    if kind == "recallers":
        return spec.recallers[0][1]
    return getattr(spec.pipelines[0], KINDS[kind])


def saved_strategy(saved: dict, kind: str) -> dict:
    return saved["recallers"][0] if kind == "recallers" else saved["pipelines"][0][KINDS[kind]]


def plain(value: object) -> object:
    """What a value looks like once written to JSON."""
    return json.loads(json.dumps(value))


def registered() -> list[tuple[str, str, type]]:
    regs = Registries.default()
    return [(kind, name, getattr(regs, kind).get(name)) for kind in KINDS for name in getattr(regs, kind).names()]


def test_every_field_of_every_registered_strategy_has_a_value_or_a_reason():
    missing = []
    for kind, name, cls in registered():
        for f in dataclasses.fields(cls):
            if (kind, name, f.name) in NOT_SETTABLE:
                continue
            if f.name not in derived_values(kind, name, cls):
                missing.append(f"{kind} {name!r}.{f.name}")
    assert not missing, (f"declare what these allow (or add an EXAMPLES value, or a NOT_SETTABLE reason): "
                         f"{', '.join(missing)}")


@pytest.mark.parametrize("kind,name,cls", registered(), ids=[f"{k}-{n}" for k, n, _ in registered()])
def test_each_parameter_is_set_from_toml_and_lands_on_the_strategy_and_in_spec_json(kind, name, cls, tmp_path):
    params = derived_values(kind, name, cls)
    defaults = {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}
    for key, value in params.items():  # each value really is a change from the default
        assert plain(_as_plain(defaults.get(key))) != plain(value), f"{name}.{key}: {value!r} is the default"
    path = tmp_path / "walk.toml"
    path.write_text(experiment(kind, name, params), encoding="utf-8")
    spec = ExperimentSpec.from_toml(path)
    strategy = built_strategy(spec, kind)
    assert type(strategy) is cls
    folder = RunFolder(tmp_path / "run")
    folder.prepare()
    folder.write_spec(spec.to_dict())  # what the runner writes as spec.json
    saved = saved_strategy(json.loads((folder.path / "spec.json").read_text(encoding="utf-8")), kind)
    assert saved["name"] == name
    for key, value in params.items():
        got = getattr(strategy, key)
        if key == "prompts":  # a dict of overrides becomes a full prompt set
            assert got == dataclasses.replace(DEFAULT_PROMPTS, **value)
            assert {k: saved[key][k] for k in value} == value
            assert saved[key]["merge"] == DEFAULT_PROMPTS.merge
            continue
        assert plain(_as_plain(got)) == plain(value), f"{name}.{key} on the strategy: {got!r}"
        assert saved[key] == plain(value), f"{name}.{key} in spec.json: {saved[key]!r}"


def _as_plain(value: object) -> object:
    if isinstance(value, tuple):
        return list(value)
    if dataclasses.is_dataclass(value):
        return dataclasses.asdict(value)
    return value


def test_the_pipeline_settings_are_set_from_toml_and_land_in_spec_json(tmp_path):
    names = {f.name for f in dataclasses.fields(Pipeline)} - set(KINDS.values())
    assert names == {p[3] for p in PIPELINE_VALUES}, "a Pipeline field without a TOML key in this test"
    grid = {"chunkers": '[{ name = "turn_window" }]', "summarizers": '["single_pass"]'}
    run = {"backends": '["fake"]'}
    for table, key, value, _ in PIPELINE_VALUES:
        (grid if table == "grid" else run)[key] = f"[{toml_value(value)}]" if table == "grid" else toml_value(value)
    text = ('[corpus]\npath = "tiny.jsonl"\n[grid]\n' + "\n".join(f"{k} = {v}" for k, v in grid.items())
            + "\n[run]\n" + "\n".join(f"{k} = {v}" for k, v in run.items()) + "\n")
    (tmp_path / "p.toml").write_text(text, encoding="utf-8")
    spec = ExperimentSpec.from_toml(tmp_path / "p.toml")
    saved = spec.to_dict()["pipelines"][0]
    for _, _, value, attr in PIPELINE_VALUES:
        assert getattr(spec.pipelines[0], attr) == value
        assert saved[attr] == value


FOCUS_GRID = """
name = "focus"
[corpus]
path = "tiny.jsonl"
conversations = 1
[grid]
chunkers = [{ name = "turn_window", max_turns = 2 }]
summarizers = [{ name = "single_pass", focus = "pets" }, { name = "single_pass", focus = "travel plans" }]
recallers = ["bm25"]
[run]
backends = ["fake"]
embedders = ["none"]
ks = [1]
cache = "off"
"""


def test_a_grid_over_focus_runs_two_cells_whose_prompts_differ(tmp_path, corpus_path):
    path = tmp_path / "focus.toml"
    path.write_text(textwrap.dedent(FOCUS_GRID), encoding="utf-8")
    spec = ExperimentSpec.from_toml(path)
    assert [p.summarizer.focus for p in spec.pipelines] == ["pets", "travel plans"]
    # The fake summarizes every window as the focus its prompt asked for, so the log ties prompts to cells.
    llm = FakeLLM(respond=lambda msgs: msgs[-1]["content"].rpartition("Focus on: ")[2] or "no focus")
    df = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": llm}))
    prompts = [msgs[-1]["content"] for msgs in llm.calls]
    tails = sorted({p.rpartition("\n")[2] for p in prompts})
    assert tails == ["Summarize the conversation above in two sentences. Focus on: pets",
                     "Summarize the conversation above in two sentences. Focus on: travel plans"]
    events = list(read_log(tmp_path / "run" / "log.jsonl"))
    summaries: dict[str, set[str]] = {}
    for e in events:
        if e["event"] == "summary_written":
            summaries.setdefault(e["cell_id"], set()).update(e["summary"])
    assert sorted(map(sorted, summaries.values())) == [["pets"], ["travel plans"]]
    assert sorted(df["summarizer.focus"].dropna().unique()) == ["pets", "travel plans"]
    assert df["cell_id"].nunique() == 2 and df["pipeline"].nunique() == 2
    saved = json.loads((tmp_path / "run" / "spec.json").read_text(encoding="utf-8"))
    assert [p["summarizer"]["focus"] for p in saved["pipelines"]] == ["pets", "travel plans"]


def test_focus_defaults_to_none_and_leaves_the_prompt_as_it_was(tmp_path):
    from lyra_lab.chunking import Chunk
    from lyra_lab.summarize import SUMMARIZERS

    chunks = [Chunk(text="user: hello\nassistant: hi", turn_ids=("a", "b"), index=0)]
    plain_llm, focused_llm, override_llm = FakeLLM(), FakeLLM(), FakeLLM()
    SUMMARIZERS.build("single_pass").summarize(chunks, plain_llm)
    SUMMARIZERS.build({"name": "single_pass", "focus": "dates"}).summarize(chunks, focused_llm)
    SUMMARIZERS.build({"name": "single_pass", "focus": "dates"}).summarize(chunks, override_llm, focus="names")
    assert plain_llm.calls[0][-1]["content"] == "user: hello\nassistant: hi\nSummarize the conversation above in two sentences."
    assert focused_llm.calls[0][-1]["content"].endswith("two sentences. Focus on: dates")
    assert override_llm.calls[0][-1]["content"].endswith("two sentences. Focus on: names")


def test_a_focus_that_is_not_text_fails_naming_the_strategy():
    from lyra_lab._registry import ConfigError
    from lyra_lab.summarize import SUMMARIZERS

    with pytest.raises(ConfigError, match=r"^summarizer 'map_reduce': parameter 'focus' = 3; "
                                          r"allowed: a string or None$"):
        SUMMARIZERS.build({"name": "map_reduce", "focus": 3})
