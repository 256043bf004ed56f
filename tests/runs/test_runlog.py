"""The run log: append-only JSON lines that survive a kill mid-line."""

from __future__ import annotations

import json
import os
import threading
from datetime import datetime, timezone

import pytest

from lyra_lab.runs import RunLog, _log, read_log


def test_events_are_appended_as_json_lines_across_reopenings(tmp_path):
    path = tmp_path / "log.jsonl"
    with RunLog(path) as log:
        log.event("cell_started", cell_id="a", now=datetime(2024, 5, 1, tzinfo=timezone.utc), ids=("x", "y"))
    with RunLog(path) as log:
        log.event("cell_done", cell_id="a", kind="summary")  # a field may be called "kind"
    events = list(read_log(path))
    assert [e["event"] for e in events] == ["cell_started", "cell_done"]
    assert events[0]["now"] == "2024-05-01T00:00:00+00:00" and events[0]["ids"] == ["x", "y"]
    assert events[1]["kind"] == "summary" and isinstance(events[1]["t"], float)


def test_a_line_cut_short_by_a_kill_is_skipped_and_the_next_event_starts_on_its_own_line(tmp_path):
    path = tmp_path / "log.jsonl"
    with RunLog(path) as log:
        log.event("cell_done", cell_id="a")
    with open(path, "ab") as fh:
        fh.write(b'{"event": "cell_star')  # the process died here
    with RunLog(path) as log:
        log.event("run_started")
    assert [e["event"] for e in read_log(path)] == ["cell_done", "run_started"]
    assert path.read_bytes().count(b"\n") == 3


def test_threads_never_interleave_inside_a_line(tmp_path):
    path = tmp_path / "log.jsonl"
    with RunLog(path) as log:
        def write(n):
            for i in range(200):
                log.event("llm_call", thread=n, i=i, text="x" * 500)
        threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        log.sync()
    lines = path.read_text().splitlines()
    assert len(lines) == 800
    assert all(json.loads(line)["text"] == "x" * 500 for line in lines)


def test_lines_another_log_wrote_are_appended_as_they_are_between_this_logs_events(tmp_path):
    cell = tmp_path / "cell.jsonl"
    with RunLog(cell) as log:  # a cell's log in a worker process
        log.event("recall", probe_id="q1", latency_s=float("nan"), hits=[["e1", 0.5]])
        log.event("probe_detail", probe_id="q1", context="line one\nline two", answer=None)
    lines = cell.read_bytes()
    run = tmp_path / "run.jsonl"
    with RunLog(run) as log:  # the driver's
        log.event("run_started")
        log.append_lines(lines)
        log.append_lines(b"")
        log.append_lines(b'{"event":"no_newline","t":1.0}')  # a last line without its newline gets one
        log.event("cell_done")
    events = list(read_log(run))
    assert [e["event"] for e in events] == ["run_started", "recall", "probe_detail", "no_newline", "cell_done"]
    assert events[1:3] == list(read_log(cell))  # same values, their own times kept
    assert events[1]["latency_s"] != events[1]["latency_s"]  # NaN survives
    assert run.read_bytes().count(lines) == 1


def test_a_private_log_without_flushes_holds_every_event_once_closed(tmp_path):
    path = tmp_path / "cell.jsonl"
    log = RunLog(path, durable=False)
    for i in range(200):
        log.event("recall", probe_id=f"q{i}", text="x" * 100)
    assert path.read_bytes().count(b"\n") < 200  # the last ones still in the buffer: not flushed one by one
    log.close()
    assert [e["probe_id"] for e in read_log(path)] == [f"q{i}" for i in range(200)]


class _GatedOs:
    """``os`` as the run log sees it, whose ``write`` of a line holding ``marker`` waits for ``release``."""

    def __init__(self, marker: bytes):
        self.marker, self.entered, self.release = marker, threading.Event(), threading.Event()

    def write(self, fd, data):
        if self.marker in bytes(data):
            self.entered.set()
            assert self.release.wait(10), "never released"
        return os.write(fd, data)

    def __getattr__(self, name):
        return getattr(os, name)


def _stuck_writer(log, gate):
    """A thread whose event is inside its write (the system call) until ``gate.release``."""
    writer = threading.Thread(target=log.event, args=("llm_call",), kwargs={"text": gate.marker.decode()})
    writer.start()
    assert gate.entered.wait(5), "the event never reached a write of its own"
    return writer


def test_a_line_being_written_holds_up_no_other_threads_line(tmp_path, monkeypatch):
    # a lock held across the write made every thread with a line wait for the holder to get the GIL
    # back after its system call (a convoy, ~30 ms a line at 32 calls in flight)
    gate = _GatedOs(b"slow-line")
    monkeypatch.setattr(_log, "os", gate)
    path = tmp_path / "log.jsonl"
    with RunLog(path) as log:
        writer = _stuck_writer(log, gate)
        other = threading.Thread(target=log.event, args=("progress",), kwargs={"done": 1})
        other.start()
        other.join(5)
        assert not other.is_alive(), "another thread's line waited for the line being written"
        assert [e["event"] for e in read_log(path)] == ["progress"]  # in the file already, whole
        gate.release.set()
        writer.join(5)
    events = list(read_log(path))
    assert [e["event"] for e in events] == ["progress", "llm_call"] and events[1]["text"] == "slow-line"


def test_close_waits_for_the_writes_under_way_and_later_events_are_refused(tmp_path, monkeypatch):
    gate = _GatedOs(b"slow-line")
    monkeypatch.setattr(_log, "os", gate)
    path = tmp_path / "log.jsonl"
    log = RunLog(path)
    writer = _stuck_writer(log, gate)
    closer = threading.Thread(target=log.close)
    closer.start()
    closer.join(0.3)
    assert closer.is_alive(), "close did not wait for the write under way"
    gate.release.set()
    closer.join(5)
    writer.join(5)
    assert not closer.is_alive() and [e["text"] for e in read_log(path)] == ["slow-line"]
    with pytest.raises(ValueError, match="closed"):
        log.event("late")
    log.close()  # twice is fine


def test_every_event_is_in_the_file_when_event_returns(tmp_path):
    # a killed process loses at most the line being written: each event reaches the kernel at once
    path = tmp_path / "log.jsonl"
    with RunLog(path) as log:
        for i in range(3):
            log.event("llm_call", i=i)
            assert [e["i"] for e in read_log(path)] == list(range(i + 1))
