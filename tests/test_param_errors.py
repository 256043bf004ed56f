"""Every parameter error of every registered strategy is one line in one format.

The walk takes every registered strategy of every kind (``Registries.default()``)
and every declared parameter, derives bad values from the declaration (wrong
type, out of range, not among the choices), sets each through the registry
from a plain dict — as an experiment file does — and by direct construction,
and checks the message: ``<kind> '<name>': parameter '<param>' = <value>;
allowed: <what is>``.  A field without a declaration fails the walk, so a new
strategy must declare its parameters.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

import pytest

from lyra_lab import ConfigError, Strategy, param
from lyra_lab._params import Declared, declared, undeclared
from lyra_lab.chunking import OverlapWindowChunker, TurnWindowChunker
from lyra_lab.experiments import ExperimentSpec
from lyra_lab.recall import Tiered
from lyra_lab.replay import Registries
from lyra_lab.rollup import SummaryBuffer, TimeLadder

KINDS = ("chunkers", "summarizers", "rollups", "recallers", "triggers")
MESSAGE = re.compile(r"^(?P<kind>chunker|summarizer|rollup|recaller|trigger) '(?P<name>\w+)': "
                     r"parameter '(?P<param>\w+)' = (?P<value>.+); allowed: (?P<allowed>.+)$")


def registered() -> list[tuple[str, str, type]]:
    regs = Registries.default()
    return [(getattr(regs, kind).kind, name, getattr(regs, kind).get(name))
            for kind in KINDS for name in getattr(regs, kind).names()]


def bad_values(decl: Declared) -> list[object]:
    """Values the declaration rejects: of a wrong type, out of each bound, outside the choices."""
    p = decl.param
    wrong_type = {bool: ["yes", 1], int: [2.5, True, "3"], float: ["fast", True], str: [3],
                  tuple: ["gist", [3]]}.get(decl.base, [3])
    out = list(wrong_type)
    step = 1 if decl.base is int else 0.5
    if p.ge is not None:
        out.append(p.ge - step)
    if p.gt is not None:
        out.append(p.gt)
    if p.le is not None:
        out.append(p.le + step)
    if p.lt is not None:
        out.append(p.lt)
    if p.choices is not None:
        out.append("no-such-choice")
    if not decl.optional and p.convert is None:  # a converter may take None (prompts: the defaults)
        out.append(None)
    return out


def cases() -> list[tuple[str, str, type, str, object]]:
    return [(kind, name, cls, pname, value) for kind, name, cls in registered()
            for pname, decl in declared(cls).items() for value in bad_values(decl)]


def test_every_field_of_every_registered_strategy_is_declared():
    missing = [f"{kind} {name!r}.{field}" for kind, name, cls in registered() for field in undeclared(cls)]
    assert not missing, f"declare these with lyra_lab._params.param(...): {', '.join(missing)}"
    assert {kind for kind, _, _ in registered()} == {"chunker", "summarizer", "rollup", "recaller", "trigger"}


def test_a_strategy_with_an_undeclared_field_is_caught_by_that_walk():
    @dataclass(frozen=True)
    class Mine:
        size: int = param(3, ge=1)
        colour: str = "red"

    extended = Registries.default().chunkers.extended(mine=Mine)
    assert undeclared(extended.get("mine")) == ["colour"]
    assert list(declared(Mine)) == ["size"]


@pytest.mark.parametrize("kind,name,cls,pname,value", cases(),
                         ids=[f"{n}.{p}={v!r}" for _, n, _, p, v in cases()])
def test_a_bad_value_is_one_line_naming_kind_strategy_parameter_value_and_what_is_allowed(
        kind, name, cls, pname, value):
    registry = getattr(Registries.default(), kind + "s")
    with pytest.raises(ConfigError) as built:
        registry.build({"name": name, pname: value})
    message = str(built.value)
    got = MESSAGE.match(message)
    assert got, f"not in the one format: {message!r}"
    shown = tuple(value) if isinstance(value, list) else value  # a spec's list is held as a tuple
    assert (got["kind"], got["name"], got["param"], got["value"]) == (kind, name, pname, repr(shown))
    allowed = declared(cls)[pname].allowed()
    assert got["allowed"] == allowed or got["allowed"].startswith(allowed + " (")  # (why a converter refused)
    with pytest.raises(ConfigError) as direct:  # building the class directly says the same
        cls(**{pname: shown})
    assert str(direct.value) == message


@pytest.mark.parametrize("kind,name,cls", registered(), ids=[f"{k}-{n}" for k, n, _ in registered()])
def test_the_defaults_are_allowed_and_none_is_where_declared(kind, name, cls):
    registry = getattr(Registries.default(), kind + "s")
    strategy = registry.build(name)
    assert registry.build(registry.spec(strategy)) == strategy == cls()
    for pname, decl in declared(cls).items():
        if decl.optional:
            assert getattr(registry.build({"name": name, pname: None}), pname) is None


@pytest.mark.parametrize("build, message", [
    (lambda: TurnWindowChunker(max_turns=0),
     "chunker 'turn_window': parameter 'max_turns' = 0; allowed: an integer >= 1"),
    (lambda: Registries.default().chunkers.build({"name": "turn_window", "respect_sessions": "yes"}),
     "chunker 'turn_window': parameter 'respect_sessions' = 'yes'; allowed: true or false"),
    (lambda: Registries.default().chunkers.build({"name": "token_budget", "encoding": "r50k_nonsense"}),
     "chunker 'token_budget': parameter 'encoding' = 'r50k_nonsense'; "
     "allowed: o200k_base, cl100k_base or an OpenAI model name"),
    (lambda: OverlapWindowChunker(max_tokens=100, overlap_tokens=100),
     "chunker 'overlap_window': parameter 'overlap_tokens' = 100; "
     "allowed: an integer >= 0 and below max_tokens (100)"),
    (lambda: Registries.default().summarizers.build({"name": "refine", "temperature": "hot"}),
     "summarizer 'refine': parameter 'temperature' = 'hot'; allowed: a number in [0, 2]"),
    (lambda: Registries.default().summarizers.build({"name": "map_reduce", "prompts": {"merge": "no partials"}}),
     "summarizer 'map_reduce': parameter 'prompts' = {'merge': 'no partials'}; "
     "allowed: a table of templates overriding some defaults (prompts.merge must contain {partials})"),
    (lambda: TimeLadder(day_after_days=10),
     "rollup 'time_ladder': parameter 'week_after_days' = 7; allowed: a number >= day_after_days (10)"),
    (lambda: SummaryBuffer(max_buffer_tokens=-1),
     "rollup 'summary_buffer': parameter 'max_buffer_tokens' = -1; allowed: an integer >= 0 or None"),
    (lambda: Registries.default().recallers.build({"name": "hybrid", "weight": 1.5}),
     "recaller 'hybrid': parameter 'weight' = 1.5; allowed: a number in [0, 1]"),
    (lambda: Registries.default().recallers.build({"name": "reference", "lexical_keys": "facts"}),
     "recaller 'reference': parameter 'lexical_keys' = 'facts'; allowed: one of 'text', 'dated' or None"),
    (lambda: Tiered(coarse_kinds=("gist", "turn")),
     "recaller 'tiered': parameter 'coarse_kinds' = ('gist', 'turn'); "
     "allowed: a non-empty list of memory entry kinds without 'turn'"),
    (lambda: Registries.default().triggers.build({"name": "idle_gap", "hours": True}),
     "trigger 'idle_gap': parameter 'hours' = True; allowed: a number > 0"),
])
def test_hand_written_messages(build, message):
    with pytest.raises(ConfigError) as caught:
        build()
    assert str(caught.value) == message


def test_an_experiment_file_reports_the_bad_parameter_in_the_same_format(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(textwrap.dedent("""
        [corpus]
        path = "tiny.jsonl"
        [grid]
        chunkers = [{ name = "token_budget", max_tokens = 0 }]
        recallers = ["bm25"]
    """), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        ExperimentSpec.from_toml(path)
    assert str(caught.value) == ("in table [grid]: chunker 'token_budget': parameter 'max_tokens' = 0; "
                                 "allowed: an integer >= 1")


def test_a_list_from_a_spec_becomes_a_tuple_and_a_valid_value_passes_unchanged():
    tiered = Registries.default().recallers.build({"name": "tiered", "coarse_kinds": ["digest", "fact"]})
    assert tiered.coarse_kinds == ("digest", "fact")
    ladder = Registries.default().rollups.build({"name": "time_ladder", "day_after_days": 2})
    assert ladder.day_after_days == 2 and type(ladder.day_after_days) is int  # not coerced: spec.json unchanged


def test_a_strategy_of_ones_own_gets_the_same_checks():
    @dataclass(frozen=True)
    class Window(Strategy):
        size: int = param(8, ge=1)
        mode: str = param("turns", choices=("turns", "lines"))

    with pytest.raises(ConfigError, match=r"^strategy 'Window': parameter 'mode' = 'words'; "
                                          r"allowed: one of 'turns', 'lines'$"):
        Window(mode="words")
    registry = Registries.default().chunkers.extended(window=Window)
    with pytest.raises(ConfigError, match=r"^chunker 'window': parameter 'size' = 0; allowed: an integer >= 1$"):
        registry.build({"name": "window", "size": 0})
