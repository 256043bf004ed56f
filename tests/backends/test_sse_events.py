"""The lean reader of a chat stream's server-sent events: what the openai client's Stream did, for less CPU."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import openai
import pytest

from lyra_lab.backends import BackendConfig, BackendError, OpenAIBackend, StreamError
from lyra_lab.backends._openai_stream import StreamAccumulator, read_events

REQUEST = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")


def chunk(content=None, finish=None, usage=None):
    out = {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": content} if content else {},
                                                  "finish_reason": finish}]}
    if usage is not None:
        out = {"id": "c", "model": "m", "choices": [], "usage": usage}
    return "data: " + json.dumps(out)


def lines(*events):
    out = []
    for event in events:
        out += [event, ""]
    return out


def test_text_finish_reason_usage_and_the_done_marker():
    acc = StreamAccumulator()
    read_events(lines(": keep-alive", chunk("Bob "), chunk("sold it."), chunk(finish="stop"),
                      chunk(usage={"prompt_tokens": 12, "completion_tokens": 3}), "data: [DONE]",
                      chunk("after done")), acc, REQUEST)
    answer = acc.answer()
    assert (answer.text, answer.finish_reason, answer.prompt_tokens, answer.completion_tokens) == (
        "Bob sold it.", "stop", 12, 3)
    assert answer.ttft_s is not None and answer.response_model == "m"


def test_an_event_split_over_data_lines_and_a_last_event_without_its_blank_line():
    acc = StreamAccumulator()
    body = json.dumps({"choices": [{"delta": {"content": "hi"}, "finish_reason": "stop"}]})
    half = len(body) // 2
    read_events(["event: message", "data:" + body[:half], "data: " + body[half:]], acc, REQUEST)
    # SSE joins data lines with a newline: inside JSON that is whitespace
    assert acc.answer().text == "hi"


def test_a_stream_without_finish_reason_is_cut_short():
    acc = StreamAccumulator()
    read_events(lines(chunk("Bob ")), acc, REQUEST)
    with pytest.raises(StreamError, match="cut short"):
        acc.answer()


def test_an_error_object_in_the_stream_carries_the_providers_message():
    with pytest.raises(openai.APIError, match="model overloaded") as info:
        read_events(lines(chunk("Bob "), 'data: {"error": {"message": "model overloaded", "type": "server"}}'),
                    StreamAccumulator(), REQUEST)
    assert info.value.body == {"message": "model overloaded", "type": "server"}


def test_malformed_json_is_a_json_decode_error():
    with pytest.raises(json.JSONDecodeError):
        read_events(lines("data: {not json"), StreamAccumulator(), REQUEST)


def test_a_transport_error_while_reading_is_a_stream_error():
    def broken():
        yield chunk("Bob ")
        yield ""
        raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")

    with pytest.raises(StreamError, match="RemoteProtocolError"):
        read_events(broken(), StreamAccumulator(), REQUEST)


class _ErrorMidStream(BaseHTTPRequestHandler):
    """A provider that fails inside a 200 stream, then (second request) answers."""

    calls = 0

    def do_POST(self):  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers["content-length"]))
        type(self).calls += 1
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        if type(self).calls == 1:
            events = [chunk("Bob "), 'data: {"error": {"message": "upstream overloaded (provider words)"}}']
        else:
            events = [chunk("fine"), chunk(finish="stop"), chunk(usage={"prompt_tokens": 5, "completion_tokens": 1}),
                      "data: [DONE]"]
        self.wfile.write(("\n\n".join(events) + "\n\n").encode())

    def log_message(self, *args):
        pass


@pytest.fixture
def error_server():
    _ErrorMidStream.calls = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ErrorMidStream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _backend(url, attempts):
    return OpenAIBackend(BackendConfig(name="mid", base_url=url, model="m", stream=True, max_attempts=attempts,
                                       retry_base_s=0.01, retry_max_s=0.02, timeout_s=5))


def test_an_error_inside_a_stream_is_retried_and_the_retry_answers(error_server):
    completion = _backend(error_server, attempts=2).complete([{"role": "user", "content": "hi"}])
    assert completion.text == "fine" and completion.meta["attempts"] == 2
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (5, 1)


def test_an_error_inside_a_stream_reaches_the_user_with_the_providers_message(error_server):
    with pytest.raises(BackendError, match="upstream overloaded \\(provider words\\)"):
        _backend(error_server, attempts=1).complete([{"role": "user", "content": "hi"}])


def test_the_last_chunk_carrying_choices_is_timed_not_the_usage_chunk_or_done(monkeypatch):
    # A clock that moves 10 ms for every reading: each chunk, the usage chunk, [DONE] and answer() come later.
    from lyra_lab.backends import _openai_stream

    ticks = iter(i / 100 for i in range(100))
    monkeypatch.setattr(_openai_stream.time, "perf_counter", lambda: next(ticks))
    acc = StreamAccumulator()  # started at 0.00
    read_events(lines(chunk("Bob "), chunk("sold it."), chunk(finish="stop"),
                      chunk(usage={"prompt_tokens": 12, "completion_tokens": 3}), "data: [DONE]"), acc, REQUEST)
    answer = acc.answer()
    # the three chunks carrying choices (TTFT read once more in between), then usage and [DONE] untimed
    assert answer.chunk_times == pytest.approx((0.01, 0.03, 0.04))
    assert answer.latency_s > answer.chunk_times[-1]  # the stream's end came after its last content chunk
    assert answer.sent_at == 0.0
