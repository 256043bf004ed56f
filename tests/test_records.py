"""One serializer convention: every record kind round-trips, old shapes still read, bad versions fail in one line."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab.runs._cell_rows import CellRows
from lyra_lab._records import (RecordError, Schema, build_fields, fields_of, from_record, plain, read_jsonl, record, schema_of,
                               to_record)
from lyra_lab._registry import ConfigError
from lyra_lab.backends import BackendConfig
from lyra_lab.corpus import CorpusFormatError, Probe, load_probes
from lyra_lab.runs import RunFolder
from lyra_lab.runs._folder import RUN_FOLDER
from lyra_lab.probes import save_probes
from lyra_lab.replay import Pipeline, Registries, strategy_spec

# ---------------------------------------------------------------- the convention on a record type of its own


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass(frozen=True)
class Inner:
    size: int
    tags: tuple[str, ...] = ()


@record(Schema("sample", version=3, readable=(2,), legacy=2))
@dataclass(frozen=True)
class Sample:
    name: str
    inner: Inner
    colour: Colour = Colour.RED
    when: datetime | None = None
    pair: tuple[int, str] = (0, "")
    limit: float | None = None


TEXT = st.text(max_size=12)
SAMPLES = st.builds(
    Sample, name=TEXT, inner=st.builds(Inner, size=st.integers(), tags=st.tuples(TEXT, TEXT)),
    colour=st.sampled_from(Colour),
    when=st.none() | st.datetimes(timezones=st.just(timezone.utc)),
    pair=st.tuples(st.integers(), TEXT), limit=st.none() | st.floats(allow_nan=False))


@given(SAMPLES)
def test_a_record_survives_json_and_back(sample):
    written = json.dumps(to_record(sample))
    assert from_record(Sample, json.loads(written)) == sample


def test_a_record_holds_its_envelope_then_plain_values():
    when = datetime(2024, 3, 1, 10, 0, tzinfo=timezone.utc)
    assert to_record(Sample("s", Inner(2, ("a", "b")), Colour.BLUE, when, (1, "x"))) == {
        "schema": "sample/3", "name": "s", "inner": {"size": 2, "tags": ["a", "b"]}, "colour": "blue",
        "when": "2024-03-01T10:00:00+00:00", "pair": [1, "x"], "limit": None}


def test_the_old_shape_without_an_envelope_reads_as_the_legacy_version():
    assert from_record(Sample, {"name": "s", "inner": {"size": 1}}) == Sample("s", Inner(1))
    assert schema_of(Sample).version_of({"name": "s"}) == 2
    assert schema_of(Sample).version_of({"schema": "sample/2", "name": "s"}) == 2


@pytest.mark.parametrize("data, message", [
    ({"schema": "sample/4", "name": "s", "inner": {"size": 1}},
     "s.json: sample schema version 4 is newer than this lyra-lab; this lyra-lab supports version 3 "
     "(and reads 2); upgrade lyra-lab to read it"),
    ({"schema": "sample/1", "name": "s", "inner": {"size": 1}},
     "s.json: sample schema version 1 is older than this lyra-lab reads; this lyra-lab supports version 3 "
     "(and reads 2); write it again with this lyra-lab"),
    ({"schema": "sample/x", "name": "s", "inner": {"size": 1}},
     "s.json: sample schema version 'x' is not a version; this lyra-lab supports version 3 (and reads 2); "
     "it was not written by lyra-lab"),
    ({"schema": "probe/1", "name": "s"}, "s.json: a 'probe' record, not a sample record (sample/3)"),
    ({"name": "s", "inner": {"size": 1}, "colour": "green"}, "s.json: colour: 'green' is not one of 'red', 'blue'"),
    ({"name": "s", "inner": {"size": 1}, "colur": "red"},
     "s.json: unknown key 'colur'; allowed: colour, inner, limit, name, pair, when"),
    ({"name": "s", "inner": {"sise": 1}}, "s.json: inner: unknown key 'sise'; allowed: size, tags"),
    ({"inner": {"size": 1}}, "s.json: missing key 'name'"),
    ({"name": "s", "inner": {"size": 1}, "when": "last week"}, "s.json: when: 'last week' is not an ISO date-time"),
    (["not", "an", "object"], "s.json: expected a JSON object (sample record), got list"),
])
def test_a_bad_record_is_one_line_naming_the_file(data, message):
    with pytest.raises(RecordError) as err:
        from_record(Sample, data, source="s.json")
    assert str(err.value) == message
    assert isinstance(err.value, ConfigError)


def test_without_a_file_the_error_names_the_kind_and_an_envelope_can_be_required():
    with pytest.raises(RecordError, match=r"^sample: missing key 'inner'$"):
        from_record(Sample, {"name": "s"})
    strict = Schema("strict", 1)
    with pytest.raises(RecordError, match=r"^f.json: no 'schema' key; expected a strict record \(strict/1\)$"):
        strict.unwrap({"x": 1}, "f.json")


def test_plain_makes_json_values_and_strategy_specs_use_it():
    assert plain({1: (Colour.RED, Path("/a"), datetime(2024, 1, 2))}) == {"1": ["red", "/a", "2024-01-02T00:00:00"]}
    regs = Registries.default()
    for registry in (regs.chunkers, regs.summarizers, regs.rollups, regs.recallers, regs.triggers):
        for name in registry.names():
            try:
                strategy = registry.build(name)
            except ConfigError:
                continue  # a strategy without defaults for every parameter
            spec = strategy_spec(strategy)
            assert spec == {"name": name, **fields_of(strategy)}
            json.dumps(spec)  # plain JSON values only
            assert registry.build(spec) == strategy, name  # the hook Registry.spec can use


def test_build_fields_builds_a_strategy_from_its_parameters_in_one_line_errors():
    cls = Registries.default().chunkers.get("turn_window")
    built = build_fields(cls, {"max_turns": 4}, "chunker 'turn_window'")
    assert strategy_spec(built) == {"name": "turn_window", **fields_of(built)} and built.max_turns == 4
    with pytest.raises(RecordError) as err:
        build_fields(cls, {"max_turnz": 4}, "chunker 'turn_window'")
    allowed = ", ".join(sorted(fields_of(built)))
    assert str(err.value) == f"chunker 'turn_window': unknown key 'max_turnz'; allowed: {allowed}"


# ---------------------------------------------------------------- backend config

BACKENDS = st.builds(
    BackendConfig, name=st.sampled_from(["openai", "local", "x"]),
    base_url=st.sampled_from(["http://127.0.0.1:8080/v1", "https://api.example.com/v1"]),
    model=st.text(min_size=1, max_size=8).filter(str.strip), api_key_env=st.none() | st.just("OPENAI_API_KEY"),
    max_concurrency=st.integers(1, 64), timeout_s=st.floats(0.1, 600), stream=st.booleans(),
    simulated=st.booleans(), params=st.dictionaries(st.sampled_from(["temperature", "top_p"]), st.floats(0, 1)))


@given(BACKENDS)
def test_a_backend_config_survives_its_record(config):
    record_ = json.loads(json.dumps(config.to_record()))
    assert record_["schema"] == "backend_config/1"
    assert BackendConfig.from_dict(record_) == config


def test_the_old_backend_shape_reads_and_bad_keys_name_themselves():
    old = {"name": "x", "base_url": "http://h/v1", "model": "m", "max_concurrency": 2}
    assert BackendConfig.from_dict(old) == BackendConfig("x", "http://h/v1", "m", max_concurrency=2)
    with pytest.raises(ConfigError, match=r"^backend config: unknown key 'temprature'; allowed: api_key_env, "):
        BackendConfig.from_dict({**old, "temprature": 0})
    with pytest.raises(ConfigError, match=r"^backend config: missing key 'model'$"):
        BackendConfig.from_dict({"name": "x", "base_url": "http://h/v1"})
    with pytest.raises(ConfigError, match=r"^backend config: backend config schema version 2 is newer"):
        BackendConfig.from_dict({**old, "schema": "backend_config/2"})
    with pytest.raises(ConfigError, match=r"^backend 'x': max_concurrency must be an integer >= 1$"):
        BackendConfig.from_dict({**old, "max_concurrency": 0})


def test_a_backend_config_record_never_holds_a_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-SECRET-1")
    config = BackendConfig(
        "openai", "https://user:sk-url-SECRET-2@api.example.com/v1?api_key=sk-query-SECRET-3", "gpt-4o-mini",
        api_key_env="OPENAI_API_KEY",
        params={"api_key": "sk-param-SECRET-4", "extra_headers": {"Authorization": "Bearer sk-hdr-SECRET-5"}})
    text = json.dumps(config.to_record())
    assert "SECRET" not in text
    written = config.to_record()
    assert written["base_url"] == "https://api.example.com/v1"
    assert written["api_key_env"] == "OPENAI_API_KEY"  # the variable's name, not its value
    assert written["params"] == {"api_key": "***", "extra_headers": {"Authorization": "***"}}


# ---------------------------------------------------------------- probes

PROBES = st.builds(
    Probe, id=TEXT.filter(bool), conversation_id=TEXT, question=TEXT, answer=TEXT,
    evidence=st.lists(TEXT, max_size=3).map(tuple), category=st.none() | st.integers(0, 9) | TEXT,
    asked_at=st.none() | st.datetimes(timezones=st.just(timezone(timedelta(hours=2)))),
    adversarial=st.booleans(), abstention=st.booleans(),
    meta=st.dictionaries(st.sampled_from(["drafted", "note", "planted"]), st.booleans() | TEXT, max_size=2))


@given(PROBES)
def test_a_probe_survives_its_record(probe):
    assert from_record(Probe, json.loads(json.dumps(to_record(probe)))) == probe


@settings(max_examples=25)
@given(st.lists(PROBES, min_size=1, max_size=4, unique_by=lambda p: p.id))
def test_probes_survive_a_probes_file(tmp_path_factory, probes):
    path = save_probes(probes, tmp_path_factory.mktemp("p") / "probes.jsonl")
    assert all(json.loads(line)["schema"] == "probe/1" for line in path.read_text().split("\n") if line)
    assert load_probes(path) == probes


def test_a_probe_line_leaves_defaults_out_and_meta_keys_beside_the_fields():
    probe = Probe("p1", "c1", "Where?", "Porto", ("t1",), category=0, meta={"drafted": True})
    assert to_record(probe) == {"schema": "probe/1", "drafted": True, "id": "p1", "question": "Where?",
                                "answer": "Porto", "evidence": ["t1"], "conversation_id": "c1", "category": 0}


OLD_PROBES = (  # as lyra-lab wrote probes files before the envelope (and as users write them by hand)
    '{"drafted": true, "id": "p1", "question": "Where?", "answer": "Porto", "evidence": ["t1"], '
    '"conversation_id": "c1", "category": 2, "asked_at": "2024-03-01T10:00:00+00:00"}\n'
    '{"id": "p2", "question": "Who?", "answer": "Ana", "evidence": [], "conversation_id": "c1", "abstention": true}\n')


def test_an_old_probes_file_reads(tmp_path):
    path = tmp_path / "old.jsonl"
    path.write_text(OLD_PROBES)
    assert load_probes(path) == [
        Probe("p1", "c1", "Where?", "Porto", ("t1",), 2, datetime(2024, 3, 1, 10, tzinfo=timezone.utc),
              meta={"drafted": True}),
        Probe("p2", "c1", "Who?", "Ana", (), abstention=True)]


def test_a_probes_line_of_a_newer_version_is_one_line_naming_file_and_line(tmp_path):
    path = tmp_path / "new.jsonl"
    path.write_text(OLD_PROBES.splitlines()[0] + "\n" + '{"schema": "probe/2", "id": "p2", "question": "q", '
                    '"answer": "a"}\n')
    with pytest.raises(CorpusFormatError) as err:
        load_probes(path)
    assert str(err.value) == (f"{path}: line 2: probe schema version 2 is newer than this lyra-lab; this lyra-lab "
                              "supports version 1; upgrade lyra-lab to read it")


# ---------------------------------------------------------------- pipeline

REGS = Registries.default()
PIPELINE_SPECS = st.fixed_dictionaries({
    "chunker": st.sampled_from(REGS.chunkers.names()), "summarizer": st.sampled_from(["none", *REGS.summarizers.names()]),
    "rollup": st.sampled_from(["none", *REGS.rollups.names()]), "trigger": st.sampled_from(REGS.triggers.names()),
    "budget": st.integers(1, 10_000), "context_budget": st.integers(1, 10_000), "keep_raw": st.booleans()})


@settings(max_examples=40)
@given(PIPELINE_SPECS)
def test_any_pipeline_survives_its_record(spec):
    pipeline = Pipeline.from_dict(spec, REGS)
    assert Pipeline.from_dict(json.loads(json.dumps(pipeline.to_record())), REGS) == pipeline


def test_a_pipeline_survives_its_record_and_its_old_shape():
    regs = Registries.default()
    pipeline = Pipeline.from_dict({"chunker": {"name": "turn_window", "max_turns": 4}, "summarizer": "none",
                                   "budget": 900, "keep_raw": False}, regs)
    written = json.loads(json.dumps(pipeline.to_record()))
    assert written == {"schema": "pipeline/1", **pipeline.to_dict()}
    assert Pipeline.from_dict(written, regs) == pipeline
    assert Pipeline.from_dict(json.loads(json.dumps(pipeline.to_dict())), regs) == pipeline  # the old shape
    with pytest.raises(ConfigError, match=r"^pipeline: pipeline schema version 2 is newer than this lyra-lab;"):
        Pipeline.from_dict({**written, "schema": "pipeline/2"}, regs)


# ---------------------------------------------------------------- run folder: lyra-run.json, spec.json, rows

SPEC = {"name": "x", "corpus": {"path": "/c.jsonl", "include_attachments": True}, "pipelines": [], "seeds": [0]}


def test_spec_json_gets_an_envelope_and_an_old_spec_json_still_matches(tmp_path):
    folder = RunFolder(tmp_path / "new")
    folder.prepare()
    folder.write_spec(SPEC)
    assert json.loads((folder.path / "spec.json").read_text()) == {"schema": "experiment/1", **SPEC}
    folder.write_spec(SPEC)  # the same experiment again: accepted
    old = RunFolder(tmp_path / "old")
    old.prepare()
    (old.path / "spec.json").write_text(json.dumps(SPEC, indent=2, sort_keys=True) + "\n")  # written before
    old.write_spec(SPEC)
    with pytest.raises(ConfigError, match="holds a run of a different experiment spec"):
        old.write_spec({**SPEC, "seeds": [1]})


def test_a_spec_json_of_a_newer_version_is_refused_in_one_line(tmp_path):
    folder = RunFolder(tmp_path)
    folder.prepare()
    (tmp_path / "spec.json").write_text(json.dumps({"schema": "experiment/2", **SPEC}))
    with pytest.raises(ConfigError) as err:
        folder.write_spec(SPEC)
    assert str(err.value) == (f"{tmp_path / 'spec.json'}: experiment schema version 2 is newer than this lyra-lab; "
                              "this lyra-lab supports version 1; upgrade lyra-lab to read it")


def test_the_run_folder_record_keeps_its_bare_version_field():
    assert RUN_FOLDER.wrap({}) == {"schema_version": 3}
    with pytest.raises(RecordError, match="older than this lyra-lab reads"):
        RUN_FOLDER.version_of({"schema_version": 1})


def test_result_rows_round_trip_and_a_broken_line_names_file_and_line(tmp_path):
    folder = RunFolder(tmp_path)
    folder.prepare()
    rows = [{"metric": "recall@5", "pipeline": "p|dense", "probe_id": "é", "value": 1.0},
            {"metric": "latency_s", "pipeline": "p|dense", "probe_id": "", "value": 0.25}]
    path = folder.write_rows("c1", CellRows.from_records(rows))
    assert path.read_text(encoding="utf-8").splitlines() == [
        '{"columns":{"pipeline":"p|dense"},"groups":2,"metrics":[["recall@5"],["latency_s"]],"rows":2,'
        '"schema":"cell_rows/1"}',
        '{"columns":{"probe_id":"é"},"metrics":0,"value":[1.0]}',
        '{"columns":{"probe_id":""},"metrics":1,"value":[0.25]}']
    assert list(folder.read_rows("c1").records()) == rows
    path.write_text(path.read_text() + '{"metric": \n')
    with pytest.raises(RecordError, match=rf"^{path}: line 4: not valid JSON \(Expecting value\)$"):
        folder.read_rows("c1")
    path.write_text("[1, 2]\n")
    with pytest.raises(RecordError, match=rf"^{path}: line 1: not a JSON object$"):
        read_jsonl(path)
