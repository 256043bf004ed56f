"""bench's serving metrics against an independent rewrite of ``vllm bench serve``'s rules (issue 43).

The rewrite below re-expresses, from vLLM's source (``vllm/benchmarks/lib/endpoint_request_func.py``,
``async_request_openai_chat_completions``; ``vllm/benchmarks/serve.py``, ``calculate_metrics`` and
``benchmark``'s client-queue figures; commits in docs/performance.md), what vLLM does with one streamed
request's events and with a run's outputs: a request's latency ends at its last chunk carrying
``choices`` (the usage chunk and ``[DONE]`` after it do not move it), the client queue is the wait
before the request is sent, an empty series reports 0, and a request is good when every SLO it is
given is ``>=`` its value. lyra-lab's records are built from the same generated events the way a
sweep builds them (a ``Completion`` as ``OpenAIBackend`` returns it, ``answer_record``,
``timed_record``), including calls whose ``complete()`` returns well after the last content chunk.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lyra_lab.backends import BackendError, Completion, Usage
from lyra_lab.bench import COLUMNS, BenchPrompt, summarize
from lyra_lab.bench._request_records import Times, answer_record, failure_record, timed_record
from lyra_lab.bench._results import coerce

T0 = 1000.0  # the level's start, a perf_counter instant
PERCENTILES = (50, 90, 99)
PROMPT = BenchPrompt("p0", ({"role": "user", "content": "hi"},), 3)


@dataclass(frozen=True)
class Streamed:
    """One generated request: when it was due and sent, its events, when ``complete()`` returned (absolute)."""

    due: float
    sent: float
    content: tuple[float, ...]  # arrival of each chunk carrying choices
    usage_at: float  # the usage chunk (no choices)
    done_at: float  # [DONE], the end of the body
    returned: float  # complete() returned
    tokens: int
    ok: bool = True


# ------------------------------------------------------------------ the rewrite of vLLM's rules
@dataclass
class VllmOutput:
    """vLLM's ``RequestFuncOutput`` fields the metrics read."""

    success: bool = False
    latency: float = 0.0
    output_tokens: int = 0
    ttft: float = 0.0
    itl: list[float] = field(default_factory=list)
    client_queue_time: float = 0.0


def vllm_request(req: Streamed) -> VllmOutput:
    """What vLLM's chat request function records from the request's event stream."""
    out = VllmOutput()
    if not req.ok:
        return out
    events = [(t, "choices") for t in req.content] + [(req.usage_at, "usage"), (req.done_at, "[DONE]")]
    st_ = req.sent
    last = st_
    first = False
    for at, kind in sorted(events):
        if kind == "[DONE]":
            continue
        if kind == "choices":
            if not first:
                first = True
                out.ttft = at - st_
            else:
                out.itl.append(at - last)
            last = at  # only a chunk carrying choices moves the request's end
        else:
            out.output_tokens = req.tokens
    out.success = first
    out.latency = last - st_
    out.client_queue_time = req.sent - req.due  # limited_request_func: start_time - arrival
    return out


def vllm_metrics(outputs: list[VllmOutput], dur_s: float, goodput_ms: dict[str, float]) -> dict[str, float]:
    """``calculate_metrics`` (and the client-queue figures of ``benchmark``), in seconds."""
    ttfts, tpots, all_tpots, itls, e2els, queues, completed, good = [], [], [], [], [], [], 0, 0
    for o in outputs:
        if not o.success:
            continue
        n = o.output_tokens or 1
        t = 0.0
        if n > 1:
            t = (o.latency - o.ttft) / (n - 1)
            tpots.append(t)
        all_tpots.append(t)
        itls += o.itl
        ttfts.append(o.ttft)
        e2els.append(o.latency)
        queues.append(o.client_queue_time)
        completed += 1
    if goodput_ms:
        chosen = [(series, goodput_ms[name] / 1000) for name, series in
                  (("ttft", ttfts), ("tpot", all_tpots), ("e2el", e2els)) if name in goodput_ms]
        for values in zip(*(series for series, _ in chosen)):
            good += all(slo >= v for (_, slo), v in zip(chosen, values))
    out = {"goodput": good / dur_s}
    series = {"ttft": ttfts, "tpot": tpots, "itl": itls, "e2el": e2els, "client_queue_time": queues,
              "e2el_including_client_queue": [o.latency + o.client_queue_time for o in outputs if o.success]}
    for name, values in series.items():
        for q in PERCENTILES:
            out[f"{name}_p{q}"] = float(np.percentile(values or 0, q))
        out[f"{name}_mean"] = float(np.mean(values or 0))
    return out


# ------------------------------------------------------------------ lyra-lab's records of the same requests
def lyra_record(seq: int, req: Streamed) -> dict:
    """The record a sweep makes: the Completion as ``OpenAIBackend`` returns it, then ``timed_record``."""
    due_s, end_s = req.due - T0, req.returned - T0
    if not req.ok:
        row = failure_record(PROMPT, BackendError("b", "HTTP 503", 503))
        return {**timed_record(seq, Times(due_s, due_s, end_s, T0), row), **_keys()}
    c = Completion(text="x", usage=Usage(10, req.tokens, 0.0), latency_s=req.done_at - req.sent, backend="b",
                   model="m", ttft_s=req.content[0] - req.sent,
                   meta={"attempts": 1, "queue_s": 0.0, "retry_s": 0.0, "sent_at": req.sent,
                         "chunk_times_s": tuple(t - req.sent for t in req.content)})
    return {**timed_record(seq, Times(due_s, due_s, end_s, T0), answer_record(PROMPT, c)), **_keys()}


def _keys() -> dict:
    return {"label": "b/m", "backend": "b", "model": "m", "simulated": False, "mode": "open", "level": 1.0}


def lyra_frame(requests: list[Streamed]) -> pd.DataFrame:
    return coerce(pd.DataFrame([lyra_record(i, r) for i, r in enumerate(requests)], columns=list(COLUMNS)))


def level_duration(requests: list[Streamed]) -> float:
    return max(r.returned for r in requests) - min(r.due for r in requests)


# ------------------------------------------------------------------ generated requests
@st.composite
def streamed(draw: st.DrawFn) -> Streamed:
    ms = st.integers(0, 400).map(lambda n: n / 1000)
    due = T0 + draw(ms)
    sent = due + draw(st.sampled_from([0.0, 0.0, 0.003, 0.25]))  # no wait, a slot, retries
    gaps = draw(st.lists(st.integers(1, 60).map(lambda n: n / 1000), min_size=1, max_size=6))
    content = tuple(np.cumsum([sent, *gaps])[1:].tolist())
    usage_at = content[-1] + draw(st.sampled_from([0.0, 0.0005, 0.002, 0.03]))
    done_at = usage_at + draw(st.sampled_from([0.0, 0.0005, 0.01]))
    returned = done_at + draw(st.sampled_from([0.0, 0.0002, 0.002, 0.05]))
    return Streamed(due, sent, content, usage_at, done_at, returned, draw(st.integers(1, 12)),
                    ok=draw(st.booleans().map(lambda b: b or draw(st.booleans()))))


@st.composite
def slo_ms(draw: st.DrawFn) -> dict[str, float]:
    names = draw(st.lists(st.sampled_from(["ttft", "tpot", "e2el"]), min_size=1, max_size=3, unique=True))
    return {n: float(draw(st.integers(1, 400))) for n in names}


@settings(max_examples=300, deadline=None)
@given(requests=st.lists(streamed(), min_size=1, max_size=8), slo=slo_ms())
def test_lyra_labs_serving_metrics_are_vllms_on_generated_requests(requests, slo):
    dur = level_duration(requests)
    want = vllm_metrics([vllm_request(r) for r in requests], dur, slo)
    got = summarize(lyra_frame(requests), {k: v / 1000 for k, v in slo.items()}).iloc[0]
    assert got["duration_s"] == pytest.approx(dur)
    assert got["goodput_rps"] == pytest.approx(want["goodput"], rel=1e-12, abs=1e-12)
    for key, value in want.items():
        if key != "goodput":
            assert got[f"{key}_s"] == pytest.approx(value, rel=1e-9, abs=1e-12), key


def test_the_issues_example_a_151_ms_e2el_slo_on_a_150_ms_request():
    # the last chunk carrying choices 150 ms after sending; usage, [DONE] and complete()'s return after it
    req = Streamed(T0, T0, (T0 + 0.02, T0 + 0.1, T0 + 0.15), T0 + 0.1505, T0 + 0.151, T0 + 0.152, 3)
    want = vllm_metrics([vllm_request(req)], level_duration([req]), {"e2el": 151.0})
    got = summarize(lyra_frame([req]), {"e2el": 0.151}).iloc[0]
    assert want["goodput"] == pytest.approx(1 / 0.152)  # 6.58 req/s: vLLM counts it good
    assert got["goodput_rps"] == pytest.approx(want["goodput"])
    assert got["e2el_p50_s"] == pytest.approx(0.15)
    assert got["latency_p50_s"] == pytest.approx(0.152)  # the call as the caller felt it, kept apart


def test_a_client_queue_is_its_own_column_not_in_e2el():
    # due at 0, sent 0.25 s later (slot waits, retries), answered 0.1 s after sending
    req = Streamed(T0, T0 + 0.25, (T0 + 0.27, T0 + 0.35), T0 + 0.35, T0 + 0.35, T0 + 0.351, 4)
    got = summarize(lyra_frame([req]), {"e2el": 0.11}).iloc[0]
    assert got["e2el_p50_s"] == pytest.approx(0.1)
    assert got["client_queue_time_p50_s"] == pytest.approx(0.25)
    assert got["e2el_including_client_queue_p50_s"] == pytest.approx(0.35)
    assert got["goodput_rps"] > 0  # vLLM's e2el SLO does not hold the client queue


def test_empty_series_report_zero_as_vllm_does():
    failed = Streamed(T0, T0, (T0 + 0.1,), T0 + 0.1, T0 + 0.1, T0 + 0.2, 3, ok=False)
    one_token = Streamed(T0, T0, (T0 + 0.1,), T0 + 0.1, T0 + 0.1, T0 + 0.1, 1)
    for requests in ([failed], [one_token]):
        want = vllm_metrics([vllm_request(r) for r in requests], level_duration(requests), {})
        got = summarize(lyra_frame(requests)).iloc[0]
        for key, value in want.items():
            if key != "goodput":
                assert got[f"{key}_s"] == value, key
    got = summarize(lyra_frame([one_token])).iloc[0]
    assert got["tpot_p99_s"] == 0.0 and got["itl_mean_s"] == 0.0  # one token, one chunk: nothing to time
    assert math.isnan(got["goodput_rps"])  # no SLO: vLLM reports none


def test_a_non_streamed_answer_ends_at_its_bodys_last_byte_and_measures_no_ttft():
    c = Completion(text="x", usage=Usage(10, 5, 0.0), latency_s=0.2, backend="b", model="m",
                   meta={"attempts": 1, "queue_s": 0.0, "retry_s": 0.0, "sent_at": T0 + 0.05})
    row = {**timed_record(0, Times(0.0, 0.0, 0.21, T0), answer_record(PROMPT, c)), **_keys()}
    got = summarize(coerce(pd.DataFrame([row], columns=list(COLUMNS)))).iloc[0]
    assert got["e2el_p50_s"] == pytest.approx(0.2) and got["client_queue_time_p50_s"] == pytest.approx(0.05)
    assert got["streamed"] == 0 and got["ttft_p50_s"] == 0.0  # vLLM's 0; ``streamed`` says it is no measure
