"""The ``http`` system against real servers: the example service (a process of its own), lyra-lab's own
pipeline served by ``MemoryHttpServer``, and faulty servers that refuse, hang or answer garbage."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from lyra_lab.backends import HashingEmbedder
from lyra_lab.systems import HttpSystem, MemoryHttpServer, MemorySystemError, PipelineSystem, run_system


def test_the_example_service_runs_a_conversation_on_the_replay_clock(example_service, conversation_and_probes):
    conv, probes = conversation_and_probes
    middle = conv.sessions[len(conv.sessions) // 2].turns[0].timestamp
    probes = [dataclasses.replace(p, asked_at=middle) if i % 2 else p for i, p in enumerate(probes)]
    run = run_system(HttpSystem(url=example_service, batch=50), conv, probes, k=5)
    assert run.system == f"http:{example_service.removeprefix('http://')}"
    assert run.ingest.turns == len(list(conv.turns())) and run.ingest.items == run.ingest.turns
    turn_ids = {t.id for t in conv.turns()}
    for asked in run.probes:
        assert len(asked.hits) == min(5, asked.turns_seen)
        assert all(h.kind == "turn" and set(h.turn_ids) <= turn_ids for h in asked.hits)
        # what was said after the question never comes back
        later = {t.id for t in conv.turns() if t.timestamp >= asked.now}
        assert not later & {tid for h in asked.hits for tid in h.turn_ids}
    assert any(a.turns_seen < run.ingest.turns for a in run.probes)  # probes asked mid-conversation


def test_a_pipeline_served_over_http_gives_the_in_process_hits(conversation_and_probes):
    conv, probes = conversation_and_probes
    system = PipelineSystem(pipeline={"chunker": {"name": "turn_window", "max_turns": 3}, "keep_raw": False},
                            recaller="hybrid")
    embedder = HashingEmbedder()
    here = run_system(system, conv, probes, k=8, embedder=embedder)
    with MemoryHttpServer(system, embedder=embedder) as server:
        served = run_system(HttpSystem(url=server.url, batch=7), conv, probes, k=8)
    assert [a.hits for a in served.probes] == [a.hits for a in here.probes]
    assert served.ingest.items == here.ingest.items and served.ingest.turns == here.ingest.turns


class Faulty(BaseHTTPRequestHandler):
    """Answers every call properly but the server's ``call``, which gets the server's ``mode``: garbage,
    an error, an old protocol, or nothing for 5 s."""

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        call, mode = self.path.strip("/"), self.server.mode  # type: ignore[attr-defined]
        good = {"open": {"protocol": 1, "session": "x"}, "ingest": {"stored": 3}, "query": {"hits": []}, "close": {}}
        status, data = 200, json.dumps(good[call])
        if call == self.server.call:  # type: ignore[attr-defined]
            if mode == "hang":  # nothing for 5 s, or until the test ends (the client left at its timeout)
                self.server.released.wait(5)  # type: ignore[attr-defined]
                return
            elif mode == "not_json":
                data = "<html>oops</html>"
            elif mode == "bad_hits":
                data = json.dumps({"hits": [{"text": "a", "kind": "opinion"}]})
            elif mode == "old_protocol":
                data = json.dumps({"protocol": 0, "session": "x"})
            else:
                status, data = 500, "Internal Server Error: boom"
        body = data.encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def faulty():
    # A hanging handler is released and joined when the test ends (server_close joins non-daemon
    # handler threads): left behind, it wrote to the socket its client had closed 5 s later, and the
    # traceback it printed, parsed by Python 3.11's traceback module, raced another test's ast.parse
    # on the interpreter's shared AST state (python/cpython#106905: "AST constructor recursion depth
    # mismatch", a failure of tests/test_architecture.py in the same worker).
    server = ThreadingHTTPServer(("127.0.0.1", 0), Faulty)
    server.daemon_threads = False
    server.released = threading.Event()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.released.set()  # type: ignore[attr-defined]
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("mode, call, words", [
    ("not_json", "ingest", "the answer is not JSON: '<html>oops</html>'"),
    ("bad_hits", "query", "hits[0].kind: 'opinion'"),
    ("error", "ingest", "HTTP 500: Internal Server Error: boom"),
    ("hang", "query", "no answer within 0.5 s"),
    ("old_protocol", "open", "answer.protocol: 0; this lyra-lab speaks protocol 1"),
    ("error", "close", "HTTP 500"),
])
def test_a_faulty_service_fails_its_session_with_one_line(faulty, conversation_and_probes, mode, call, words):
    conv, _ = conversation_and_probes
    faulty.mode, faulty.call = mode, call
    system = HttpSystem(url=f"http://127.0.0.1:{faulty.server_port}", timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(MemorySystemError) as caught:
        with system.open(conv.id, None, None) as session:
            session.ingest(list(conv.turns())[:3])
            session.query("what is my dog called?", 5)
    message = str(caught.value)
    assert "\n" not in message and caught.value.call == call and words in message, message
    assert message.startswith(f"memory system 'http:127.0.0.1:{faulty.server_port}': {call} failed: ")
    assert time.monotonic() - started < 4.5  # the hang was cut at the timeout, not waited out


def test_a_service_that_is_not_there_fails_at_open():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free, and nobody listens on it once closed
    with pytest.raises(MemorySystemError, match=r"'http:127\.0\.0\.1:\d+': open failed: ConnectError"):
        HttpSystem(url=f"http://127.0.0.1:{port}").open("c", None, None)


def test_the_server_answers_bad_requests_with_one_line():
    import httpx

    with MemoryHttpServer(PipelineSystem()) as server:
        assert httpx.post(f"{server.url}/query", json={"protocol": 1, "session": "nope", "query": "q"}).status_code == 404
        bad = httpx.post(f"{server.url}/open", json={"protocol": 2})
        assert bad.status_code == 400 and bad.json() == {"error": "request.protocol: 2; this lyra-lab speaks protocol 1"}
        opened = httpx.post(f"{server.url}/open", json={"protocol": 1, "conversation_id": "c"}).json()
        bad_turn = httpx.post(f"{server.url}/ingest", json={"protocol": 1, "session": opened["session"],
                                                            "turns": [{"id": "t1"}]})
        assert bad_turn.status_code == 400 and bad_turn.json()["error"] == "request.turns[0].text: expected a string, got None"


def test_the_server_reads_a_turn_field_by_field_and_says_which_one_is_wrong():
    import httpx

    with MemoryHttpServer(PipelineSystem()) as server:
        session = httpx.post(f"{server.url}/open", json={"protocol": 1, "conversation_id": "c"}).json()["session"]

        def ingest(turn):
            return httpx.post(f"{server.url}/ingest", json={"protocol": 1, "session": session, "turns": [turn]})

        number_time = ingest({"id": "t1", "text": "hi", "timestamp": 5})
        assert number_time.status_code == 400
        assert number_time.json()["error"] == "request.turns[0].timestamp: expected an ISO 8601 time or null, got 5"
        assert ingest("t1").json()["error"] == "request.turns[0]: expected a JSON object, got str"
        naive = ingest({"id": "t1", "text": "hi", "timestamp": "2024-03-01T10:00:00"})
        assert naive.status_code == 400
        assert naive.json()["error"] == "request.turns[0]: turn 't1': timestamp must be timezone-aware (UTC)"
        stored = ingest({"id": "t1", "text": "I adopted a dog", "speaker": "Mel",
                         "timestamp": "2024-03-01T10:00:00+00:00"})
        assert stored.status_code == 200 and set(stored.json()) == {"stored", "usage", "failed_calls", "bad_outputs",
                                                                    "embed_calls", "notes"}
        assert set(stored.json()["usage"]) == {"prompt_tokens", "completion_tokens", "cost_usd", "calls", "cached_calls"}
        final = httpx.post(f"{server.url}/ingest", json={"protocol": 1, "session": session, "turns": [], "final": True})
        hits = httpx.post(f"{server.url}/query", json={"protocol": 1, "session": session, "query": "dog", "k": 3}).json()
        # the default pipeline keeps the raw turn beside its window: both trace to t1
        assert final.status_code == 200 and hits["hits"] and all(h["turn_ids"] == ["t1"] for h in hits["hits"])
        assert hits["hits"][0]["when"] == "2024-03-01T10:00:00+00:00" and "Mel" in hits["hits"][0]["text"]
