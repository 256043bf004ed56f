"""jsonl_bytes: every line reads back as what json.dumps(ensure_ascii=False, sort_keys=True, default=str) reads back as."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import math
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lyra_lab.runs._jsonl import json_line, jsonl_bytes
from lyra_lab.runs._log import _default

JSON = {"ensure_ascii": False, "sort_keys": True, "default": str}


def comparable(value: Any) -> Any:
    """NaN made equal to itself, and the float/int distinction kept (1 == 1.0 in Python)."""
    if isinstance(value, float):
        return ("nan",) if math.isnan(value) else (float, value)
    if isinstance(value, list):
        return [comparable(v) for v in value]
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items()}
    return value


def read_back(data: bytes) -> list[Any]:
    return [comparable(json.loads(line)) for line in data.decode("utf-8").split("\n")[:-1]]


def json_read_back(records: list[Any]) -> list[Any]:
    return [comparable(json.loads(json.dumps(r, **JSON))) for r in records]


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(),
    st.sampled_from(["},{", '"},{"', "null", "é", "\u2028", "\x00", "a\nb"]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
                      max_leaves=6)
records = st.lists(st.dictionaries(st.text(), values, max_size=6), max_size=6)


@given(records)
def test_lines_read_back_as_json_writes_them(rows):
    data = jsonl_bytes(rows)
    assert read_back(data) == json_read_back(rows)
    assert data == b"" or data.endswith(b"\n")


def test_plain_rows_are_compact_lines_with_sorted_keys():
    rows = [{"value": 0.1, "metric": "recall@5", "probe_id": "é", "seed": 2**63, "ok": True, "x": 1e-05},
            {"metric": "mrr", "value": 1.0, "probe_id": "},{", "seed": 0, "ok": False, "x": 1e16}]
    lines = jsonl_bytes(rows).decode("utf-8").splitlines()
    assert lines[0] == '{"metric":"recall@5","ok":true,"probe_id":"é","seed":9223372036854775808,"value":0.1,"x":0.00001}'
    assert read_back(jsonl_bytes(rows)) == json_read_back(rows)


def test_nan_infinity_and_none_read_back_as_given():
    rows = [{"value": float("nan"), "w": None}, {"value": float("-inf"), "w": 1}, {"value": 0.5, "w": None}]
    lines = jsonl_bytes(rows).decode("utf-8").split("\n")[:-1]
    back = [json.loads(line) for line in lines]
    assert math.isnan(back[0]["value"]) and back[0]["w"] is None
    assert back[1] == {"value": float("-inf"), "w": 1} and back[2] == {"value": 0.5, "w": None}
    assert lines == ['{"value": NaN, "w": null}', '{"value": -Infinity, "w": 1}', '{"value":0.5,"w":null}']


class Plain(enum.Enum):
    A = 1


class Named(str, enum.Enum):
    A = "a"


@dataclasses.dataclass
class Point:
    x: int


@pytest.mark.parametrize("value", [
    np.float64(0.25), np.int64(3), np.bool_(True), datetime.date(2024, 1, 2), datetime.datetime(2024, 1, 2, 3, 4),
    Point(1), {1: "a"}, (1, "b"), Named.A, 2**64, -(2**64), MappingProxyType({"a": 1}),
])
def test_values_orjson_writes_otherwise_are_left_to_json(value):
    rows = [{"v": value, "metric": "m"}, {"v": 1, "metric": "n"}]
    assert read_back(jsonl_bytes(rows)) == json_read_back(rows)


@pytest.mark.parametrize("first", [[1], MappingProxyType({"a": 1})])
def test_a_record_that_is_not_a_dict_is_written_as_json_writes_it(first):
    rows: list[Any] = [first, {"b": "},{"}]  # one "},{" in all: without the check, cut in the wrong place
    assert read_back(jsonl_bytes(rows)) == json_read_back(rows)


def test_a_plain_enum_is_written_as_its_value_the_one_known_difference():
    assert jsonl_bytes([{"v": Plain.A}]) == b'{"v":1}\n'


LOG_JSON = json.JSONEncoder(ensure_ascii=False, default=_default, sort_keys=False).encode  # the run log's


def log_read_back(record: dict) -> Any:
    line = json_line(record, LOG_JSON, _default)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    return comparable(json.loads(line))


@given(st.dictionaries(st.text(), values, max_size=6))
def test_a_log_line_reads_back_as_the_json_encoders(record):
    assert log_read_back(record) == comparable(json.loads(LOG_JSON(record)))


@pytest.mark.parametrize("value", [
    np.float64(0.25), np.float64("nan"), np.float32("nan"), np.float32("-inf"), {float("nan")}, np.int64(3),
    np.bool_(True), datetime.date(2024, 1, 2),
    datetime.datetime(2024, 1, 2, 3, 4, 5, 600, tzinfo=datetime.timezone.utc), {"x", "y"}, frozenset({1}),
    Point(1), {1: "a"}, (1, "b"), Named.A, 2**64, float("inf"), [float("nan")], MappingProxyType({"a": 1}),
])
def test_log_values_orjson_would_write_otherwise_read_back_as_json_writes_them(value):
    record = {"event": "recall", "v": value, "hits": [["turn:1", 0.5]]}
    assert log_read_back(record) == comparable(json.loads(LOG_JSON(record)))


def test_a_log_line_keeps_the_order_of_its_keys():
    line = json_line({"event": "recall", "t": 1.5, "b": 1, "a": [1e-05]}, LOG_JSON, _default)
    assert line == b'{"event":"recall","t":1.5,"b":1,"a":[0.00001]}\n'
