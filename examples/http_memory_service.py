"""A complete memory service speaking lyra-lab's memory protocol, in the standard library alone.

Three endpoints (``/open``, ``/ingest``, ``/query``; ``/close`` too) over a
word-overlap "memory": replace ``score`` and the lists with your own service.
Run it and point lyra-lab at it:

    python examples/http_memory_service.py --port 8400
    # system = {name = "http", url = "http://127.0.0.1:8400"}

The protocol is in docs/memory-systems.md.  lyra-lab's tests run this file as a real server.
"""

import argparse
import json
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MEMORIES = {}  # session id -> list of stored turns


def words(text):
    return set(re.findall(r"\w+", text.lower()))


def handle(call, body):
    if call == "open":
        session = f"s{len(MEMORIES) + 1}"
        MEMORIES[session] = []
        return {"protocol": 1, "session": session}
    memory = MEMORIES[body["session"]]
    if call == "ingest":
        memory.extend(body["turns"])
        return {"stored": len(body["turns"])}
    if call == "query":
        query = words(body["query"])
        scored = sorted(memory, key=lambda t: -len(query & words(t["text"])))[: body["k"]]
        return {"hits": [{"text": f"{t['speaker']}: {t['text']}", "score": len(query & words(t["text"])),
                          "turn_ids": [t["id"]], "when": t["timestamp"], "kind": "turn"} for t in scored]}
    if call == "close":
        MEMORIES.pop(body["session"])
        return {}
    raise KeyError(call)  # e.g. /contents, which this service does not offer: a 404 tells lyra-lab so


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        try:
            status, answer = 200, handle(self.path.strip("/"), body)
        except KeyError as exc:
            status, answer = 404, {"error": f"unknown {exc}"}
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8400)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"memory service on http://127.0.0.1:{server.server_port}", flush=True)
    server.serve_forever()
