"""``serve_until_stopped``: the server is stopped and SIGTERM's handler put back, however the wait ends."""

from __future__ import annotations

import os
import signal

import pytest

from lyra_lab.commands._foreground import serve_until_stopped


class FakeServer:
    """A fake server: records its starts and stops; ``start`` may raise."""

    def __init__(self, fails: Exception | None = None) -> None:
        self.calls: list[str] = []
        self.fails = fails

    def start(self) -> None:
        self.calls.append("start")
        if self.fails is not None:
            raise self.fails

    def stop(self) -> None:
        self.calls.append("stop")


@pytest.fixture
def handler():
    """SIGTERM's handler before the test, checked to be back after it."""
    def before(*_: object) -> None:
        raise AssertionError("the command's own handler should have caught SIGTERM")

    previous = signal.signal(signal.SIGTERM, before)
    yield before
    assert signal.getsignal(signal.SIGTERM) is before
    signal.signal(signal.SIGTERM, previous)


def test_sigterm_stops_the_server_and_exits_0(handler, capsys):
    server = FakeServer()
    code = serve_until_stopped(server, lambda: os.kill(os.getpid(), signal.SIGTERM))
    assert code == 0 and server.calls == ["start", "stop"]
    assert capsys.readouterr().out == "stopped\n"


def test_ctrl_c_stops_the_server_and_exits_0(handler, capsys):
    server = FakeServer()

    def announce() -> None:
        raise KeyboardInterrupt

    assert serve_until_stopped(server, announce) == 0 and server.calls == ["start", "stop"]
    assert capsys.readouterr().out == "stopped\n"


def test_a_failure_is_one_error_line_and_exit_1_with_the_server_stopped(handler, capsys):
    server = FakeServer()
    code = serve_until_stopped(server, lambda: None, lambda: "the server exited unexpectedly")
    assert code == 1 and server.calls == ["start", "stop"]
    out, err = capsys.readouterr()
    assert err == "error: the server exited unexpectedly\n" and "stopped" not in out


def test_a_server_that_fails_to_start_is_stopped_and_the_error_goes_on(handler):
    server = FakeServer(fails=RuntimeError("did not start"))
    with pytest.raises(RuntimeError, match="did not start"):
        serve_until_stopped(server, lambda: None)
    assert server.calls == ["start", "stop"]
