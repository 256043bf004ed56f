"""A plan never sits in retries: measuring a local server's speed for the forecast is one short try.

A llama.cpp server on this machine that closes every connection unanswered: ``lyra-lab plan`` used to
retry the calibration call 8 times over ~53 s, printing each attempt, then end "no HTTP status:
Connection error".  Now it makes one connection and says in one line which backend did not answer.
"""

from __future__ import annotations

import socket
import threading

from lyra_lab.cli import main

RUN = """
name = "dead-server"
[corpus]
path = "tiny.jsonl"
[grid]
chunkers = [{{ name = "turn_window", max_turns = 2 }}]
summarizers = ["none"]
recallers = ["bm25"]
[run]
backends = ["llamacpp/http://127.0.0.1:{port}/v1"]
embedders = ["none"]
ks = [1]
cache = "off"
[qa]
enabled = true
max_probes = 1
"""


class Hangup:
    """A TCP listener on 127.0.0.1 that accepts each connection and closes it at once, counting them."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()


def test_plan_with_a_local_server_that_does_not_answer_is_one_line_after_one_try(write_toml, capsys):
    server = Hangup()
    try:
        path = write_toml(RUN.format(port=server.port))
        code = main(["plan", str(path)])
    finally:
        server.close()
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert code == 2, captured
    assert "\n" not in err and "Traceback" not in err and "failed unexpectedly" not in err, err
    assert f"backend 'llamacpp/http://127.0.0.1:{server.port}/v1' did not answer" in err, err
    assert server.accepted == 1  # one try (the run's retry policy would have made 8)
