"""The daemon threads that run summarizer calls: reused between calls, never lost, ended when idle."""

from __future__ import annotations

import contextvars
import os
import threading
import time

import pytest

from lyra_lab.summarize._calls import CallThreads, run_in_thread


def _wait_for(condition, timeout_s: float = 5.0) -> None:
    end = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < end, "condition not met in time"
        time.sleep(0.005)


def test_a_thread_that_finished_a_call_runs_the_next_one():
    threads = CallThreads(idle_s=5.0)
    ran: list[int] = []
    for _ in range(5):
        done = threading.Event()
        threads.run(lambda done=done: (ran.append(threading.get_ident()), done.set()))
        assert done.wait(5)
        _wait_for(lambda: threads._idle == 1)  # back to waiting before the next call
    assert threads.started == 1 and len(set(ran)) == 1
    thread = next(t for t in threading.enumerate() if t.ident == ran[0])
    assert thread.daemon  # never joined at exit: a hung call cannot hang the process


def test_calls_at_once_each_get_a_thread_and_every_call_runs():
    threads = CallThreads(idle_s=5.0)
    gate, finished = threading.Barrier(9), []

    def call():
        gate.wait(5)  # all 8 calls must be running at the same time to pass the barrier
        finished.append(1)

    for _ in range(8):
        threads.run(call)
    gate.wait(5)
    _wait_for(lambda: len(finished) == 8)
    assert threads.started == 8
    _wait_for(lambda: threads._idle == 8)
    gate.reset()
    for _ in range(8):  # 8 more at once, with 8 threads waiting: they run them, none starts
        threads.run(call)
    gate.wait(5)
    _wait_for(lambda: len(finished) == 16)
    assert threads.started == 8
    for _ in range(50):  # a burst faster than threads come back: every call runs
        threads.run(lambda: finished.append(1))
    _wait_for(lambda: len(finished) == 66)


def test_an_idle_thread_ends_and_a_later_call_starts_a_new_one():
    threads = CallThreads(idle_s=0.05)
    done = threading.Event()
    threads.run(done.set)
    assert done.wait(5)
    _wait_for(lambda: threads._idle == 0)  # it waited 0.05 s for another call, then ended
    done.clear()
    threads.run(done.set)
    assert done.wait(5) and threads.started == 2


def test_each_call_sees_a_fresh_context_as_on_a_new_thread():
    var: contextvars.ContextVar[str] = contextvars.ContextVar("v", default="unset")
    threads, seen = CallThreads(idle_s=5.0), []
    for _ in range(2):
        done = threading.Event()
        threads.run(lambda done=done: (seen.append(var.get()), var.set("leaked"), done.set()))
        assert done.wait(5)
    assert seen == ["unset", "unset"] and threads.started == 1


def test_run_in_thread_hands_back_the_result_and_the_exception():
    assert run_in_thread(lambda x, y=0: x + y, 2, y=3).result(5) == 5
    with pytest.raises(KeyError):
        run_in_thread(dict().__getitem__, "missing").result(5)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_child_starts_threads_of_its_own():
    done = threading.Event()
    run_in_thread(done.set)  # the parent has an idle call thread now
    assert done.wait(5)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the parent's idle thread does not exist here
        try:
            ok = run_in_thread(lambda: 42).result(5) == 42
        except BaseException:  # noqa: BLE001
            ok = False
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1"
