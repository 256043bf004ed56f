"""The run's heartbeat: a progress event (and, off a terminal, a status line) while long cell work goes on."""

from __future__ import annotations

import json
import time

import numpy as np

from lyra_lab.backends import HashingEmbedder
from lyra_lab.experiments import ExperimentSpec, Injected, RunOptions, run_experiment
from lyra_lab.experiments.executors import _heartbeat

GRID = """
name = "beating"
[corpus]
path = "tiny.jsonl"
[grid]
chunkers = [{ name = "turn_window", max_turns = 1 }]
summarizers = ["none"]
recallers = ["dense"]
[run]
backends = ["fake"]
embedders = ["slow"]
ks = [1]
cache = "off"
"""


class SlowEmbedder(HashingEmbedder):
    """A fake embedder that takes 0.05 s a call (long enough for several beats of 0.02 s)."""

    def embed(self, texts, kind="passage") -> np.ndarray:
        time.sleep(0.05)
        return super().embed(texts, kind)


def test_a_run_logs_heartbeat_progress_between_a_cells_start_and_end_and_prints_status_lines(
        write_toml, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_heartbeat, "EVERY_S", 0.02)
    spec = ExperimentSpec.from_toml(write_toml(GRID))
    run_experiment(spec, tmp_path / "run", RunOptions(progress=True, status_line=True),
                   Injected(embedders={"slow": SlowEmbedder(32)}))
    events = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text(encoding="utf-8").splitlines()]
    kinds = [e["event"] for e in events]
    first_start, last_done = kinds.index("cell_started"), len(kinds) - 1 - kinds[::-1].index("cell_done")
    beats = [e for e in events[first_start:last_done] if e["event"] == "progress" and e.get("source") == "heartbeat"]
    assert beats and all(e["cells_total"] == 2 for e in beats)
    tasks = [e.get("task", "") for e in beats]
    assert any(t.startswith(("store: ", "recall: ")) or "embed" in t for t in tasks)
    assert not any(t.startswith("summarize") for t in tasks)  # the grid has no summarizer
    assert "beating: " in capsys.readouterr().err  # the status lines (lyra-lab run sets them off a terminal)
    run_experiment(spec, tmp_path / "quiet", RunOptions(progress=True), Injected(embedders={"slow": SlowEmbedder(32)}))
    assert "beating: " not in capsys.readouterr().err  # the API's default (notebooks keep their bars)


def test_heartbeat_reports_the_summarizing_phase_from_the_cells_events(tmp_path):
    from lyra_lab.runs import RunLog

    with RunLog(tmp_path / "log.jsonl") as log:
        beat = _heartbeat.Heartbeat(log, "r", cells=3, every_s=0.01, status_line=False)
        log.event("cell_started", cell_id="c1", pipeline="p", conversation_id="u0", flushes=4,
                  spec={"summarizer": {"name": "single_pass"}})
        log.event("summary_written", cell_id="c1", flush=0)
        log.event("summary_written", cell_id="c1", flush=1)
        beat.start()
        time.sleep(0.1)
        beat.stop()
        event = beat.status()
        assert event is not None and (event.done, event.total, event.unit) == (2, 4, "window")
        assert event.task == "summarize: p · u0" and event.eta_s is not None
        log.event("cell_done", cell_id="c1")
        log.event("cell_done", cell_id="alias-of-c1", alias_of="c1")  # copied rows: done, though not run here
        beat._read(log.path)
        # the grid's count (3 cells, the alias done too); the ETA from the one cell run here
        assert (beat.done, beat.ran) == (2, 1) and beat.status() is None
        assert "r: 2/3 cells · run ETA " in beat.line(None)
    beats = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text(encoding="utf-8").splitlines()
             if '"heartbeat"' in line]
    assert beats and beats[-1]["done"] == 2 and beats[-1]["cells_done"] == 0


def _status_after(tmp_path, **started):
    from lyra_lab.runs import RunLog

    with RunLog(tmp_path / "log.jsonl") as log:
        beat = _heartbeat.Heartbeat(log, "r", _heartbeat.CellCount(5, done=2, to_run=2))
        log.event("cell_started", cell_id="c1", pipeline="p", conversation_id="u0", **started)
        log.event("summary_written", cell_id="c1", flush=0)
        beat._read(log.path)
        return beat.status(), beat.line(beat.status())


def test_a_cell_without_a_summarizer_is_not_said_to_summarize(tmp_path):
    event, line = _status_after(tmp_path, flushes=4, spec={"summarizer": "none"})
    assert event is not None and event.task == "store: p · u0" and (event.done, event.total) == (1, 4)
    assert "summarize" not in line and line.startswith("[") and "r: 2/5 cells · store: p · u0 1/4 windows" in line


def test_a_cell_with_every_window_written_is_recalling_and_a_system_cell_counts_no_windows(tmp_path):
    event, line = _status_after(tmp_path / "a", flushes=1, spec={"summarizer": {"name": "single_pass"}})
    assert event is not None and event.task == "recall: p · u0" and event.total == 0
    assert "recall: p · u0, " in line and "so far" in line and "0/0" not in line
    event, line = _status_after(tmp_path / "b", flushes=0, system="mem0:raw")
    assert event is not None and event.task == "ingest and query: p · u0"
    assert "summarize" not in line and "window" not in line and "0/0" not in line


def test_elapsed_time_runs_from_when_the_cell_started_not_from_when_the_beat_read_it(tmp_path):
    from lyra_lab.runs import RunLog

    with RunLog(tmp_path / "log.jsonl") as log:
        beat = _heartbeat.Heartbeat(log, "r", cells=1)
        log.event("cell_started", cell_id="c1", pipeline="p", conversation_id="u0", flushes=4,
                  spec={"summarizer": "none"})
        time.sleep(0.2)  # the beat reads the start late
        beat._read(log.path)
        event = beat.status()
    assert event is not None and event.elapsed_s >= 0.2


def test_with_status_lines_the_first_line_comes_at_the_start_not_a_beat_later(tmp_path, capsys):
    from lyra_lab.runs import RunLog

    with RunLog(tmp_path / "log.jsonl") as log:
        beat = _heartbeat.Heartbeat(log, "r", _heartbeat.CellCount(5, done=2), every_s=3600, status_line=True)
        beat.start()
        beat.stop()
    assert capsys.readouterr().err == "[0s] r: 2/5 cells\n"


def test_a_qa_cell_counts_its_answers_as_they_are_logged(tmp_path):
    from lyra_lab.runs import RunLog

    with RunLog(tmp_path / "log.jsonl") as log:
        beat = _heartbeat.Heartbeat(log, "r", cells=2)
        log.event("cell_started", cell_id="c1", pipeline="p", conversation_id="u0", flushes=1, answers=40,
                  spec={"summarizer": "none"})
        log.event("summary_written", cell_id="c1", flush=0)
        for i in range(12):
            log.event("answer", cell_id="c1", probe_id=f"q{i}", recaller="bm25", text="x")
            time.sleep(0.01)
        beat._read(log.path)
        event = beat.status()
    assert event is not None and (event.task, event.done, event.total, event.unit) == ("answer: p · u0", 12, 40,
                                                                                       "answer")
    assert event.rate > 0 and event.eta_s is not None
    line = beat.line(event)
    assert "answer: p · u0 12/40 answers (30%)" in line and line.count("ETA") == 1


def test_each_status_line_carries_one_eta_and_fits_the_terminal(tmp_path):
    from lyra_lab._terminal import COLUMNS
    from lyra_lab.backends import ProgressEvent
    from lyra_lab.runs import RunLog

    with RunLog(tmp_path / "log.jsonl") as log:
        beat = _heartbeat.Heartbeat(log, "a-rather-long-experiment-name", _heartbeat.CellCount(8, done=1, to_run=7))
        beat.ran = 1  # one cell run here: the run's ETA is known from it
        embedding = ProgressEvent("embed passages: onnx-int8/multilingual-e5-small", 1_200, 5_882, "text",
                                  38.5, 31.2, 1_423.0)
        line = beat.line(embedding)
        # the stage's own ETA (measured on its units), not the run's from one cell's time as well
        assert line.count("ETA") == 1 and "ETA 23m43s" in line and "run ETA" not in line
        assert all(len(piece) <= COLUMNS for piece in line.splitlines())
        recall = ProgressEvent("recall: hybrid · conversation-of-a-long-name", 0, 0, "probe", 12.0, 0.0, None)
        assert beat.line(recall).count("ETA") == 1 and "run ETA" in beat.line(recall)  # no count: the run's


def test_a_cell_expects_an_answer_per_probe_prompt_and_repeat():
    """The QA count's total is what the answering stage logs: an ``answer`` event per prompt × repeat."""
    from lyra_lab.experiments.cells import _run
    from lyra_lab.experiments.cells._setup import AnswerSetup, CellSetup
    from lyra_lab.measures import Scoring

    def total(answering: AnswerSetup | None, probes: int) -> int:
        return _run.answers_per_recaller(CellSetup("r", "c", (), Scoring(ks=(1,)), answering=answering), probes)

    assert total(None, 5) == 0
    assert total(AnswerSetup(), 5) == 5
    assert total(AnswerSetup(max_probes=3), 5) == 3
    assert total(AnswerSetup(prompts=("short_v1", "locomo"), repeats=3, temperature=0.7), 5) == 30
    assert total(AnswerSetup(prompts=("short_v1", "mem0"), repeats=2, temperature=0.7, max_probes=2), 5) == 8
