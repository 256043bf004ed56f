"""Sweeps against the SimulatedServer: counts and the server's own request log, not wall-clock thresholds."""

from __future__ import annotations

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import FakeLLM, SimulatedServer, make_backend
from lyra_lab.bench import SweepSpec, bench_backend, run_sweep, synthetic_prompts

PROMPTS = synthetic_prompts(8, prompt_tokens=60)
# Streamed levels are sent from one event loop, the others from a thread per request: both loads keep each promise.
BOTH_LOADS = pytest.mark.parametrize("stream", [False, True], ids=["threads", "event loop"])


def _backend(server, cap, **fields):
    return bench_backend({"preset": "simulated", "base_url": server.base_url}, cap, **fields)


@BOTH_LOADS
def test_throughput_rises_with_concurrency_then_plateaus_at_the_server_limit(stream):
    with SimulatedServer(latency_s=0.2, max_concurrency=2) as server:
        backend = _backend(server, 4, stream=stream)
        spec = SweepSpec(concurrency=(1, 2, 4), requests=8, max_tokens=8, warmup=0)
        result = run_sweep(backend, PROMPTS, spec, progress=False)
        log = server.chat_log()
    assert result.meta["client"] == ("event loop" if stream else "threads")
    assert len(log) == 24 and all(r.status == 200 for r in log)
    assert server.max_serving == 2  # the server never served more than its limit
    waited = {}  # per level: requests that waited in the server's queue for a slot
    for level, chunk in zip((1, 2, 4), (log[:8], log[8:16], log[16:])):
        waited[level] = sum((r.started - r.received) > 0.1 for r in chunk)
    assert waited[1] == waited[2] == 0 and waited[4] >= 4
    tput = result.summary().set_index("level")["throughput_rps"]
    assert tput[2.0] / tput[1.0] > 1.5  # ideal 2: two slots in use
    assert tput[4.0] / tput[2.0] < 1.3  # ideal 1: the extra workers only queue
    lat = result.summary().set_index("level")["latency_p50_s"]
    assert lat[4.0] / lat[2.0] > 1.5  # ideal 2: queueing shows up as latency


@BOTH_LOADS
def test_rate_limit_429s_are_retried_and_counted_exactly(stream):
    with SimulatedServer(rate_limit_rps=4, rate_limit_burst=1) as server:
        backend = _backend(server, 4, max_attempts=3, retry_after_max_s=0.05, stream=stream)
        result = run_sweep(backend, PROMPTS, SweepSpec(concurrency=(4,), requests=12, max_tokens=4, warmup=0),
                           progress=False)
        log = server.chat_log()
    rec = result.records
    limited = sum(r.status == 429 for r in log)
    assert limited > 0
    # every attempt reached the server; every attempt but the successful ones was a 429
    assert len(log) == rec["attempts"].sum()
    assert limited == rec["attempts"].sum() - rec["ok"].sum()
    assert (rec["attempts"] > 1).any()
    assert set(rec.loc[~rec["ok"], "status"]) <= {"429"}
    s = result.summary().iloc[0]
    assert s["retried"] == (rec["attempts"] > 1).sum() and s["mean_attempts"] > 1


def test_without_retries_429s_are_errors_by_status():
    with SimulatedServer(rate_limit_rps=1, rate_limit_burst=1) as server:
        backend = _backend(server, 4, max_attempts=1)
        result = run_sweep(backend, PROMPTS, SweepSpec(concurrency=(4,), requests=8, max_tokens=4, warmup=0),
                           progress=False)
        limited = sum(r.status == 429 for r in server.chat_log())
    s = result.summary().iloc[0]
    assert s["errors"] == limited > 0
    assert s["errors_by_status"] == f"429:{limited}"
    assert (result.records["attempts"] == 1).all()
    assert result.records.loc[~result.records["ok"], "error"].str.contains("HTTP 429").all()


@BOTH_LOADS
def test_open_loop_arrivals_follow_the_schedule_and_poisson_is_seeded(stream):
    with SimulatedServer(latency_s=0.0) as server:
        backend = _backend(server, 8, stream=stream)
        spec = SweepSpec(concurrency=(), rates=(20.0,), requests=6, max_tokens=4, max_in_flight=8)
        uniform = run_sweep(backend, PROMPTS, spec, progress=False)
        spec = SweepSpec(concurrency=(), rates=(10.0,), requests=6, max_tokens=4, arrivals="poisson",
                         max_in_flight=8, seed=7)
        p1 = run_sweep(backend, PROMPTS, spec, progress=False)
        p2 = run_sweep(backend, PROMPTS, spec, progress=False)
    rec = uniform.records
    assert list(rec["mode"].unique()) == ["open"] and rec["ok"].all()
    assert rec["start_s"].tolist() == pytest.approx([i / 20 for i in range(6)])
    assert (rec["sent_s"] >= rec["start_s"] - 1e-3).all()  # never sent before its arrival time
    assert (rec["latency_s"] == rec["end_s"] - rec["start_s"]).all()  # counted from the scheduled arrival
    assert p1.records["start_s"].tolist() == p2.records["start_s"].tolist()
    assert len(set(p1.records["start_s"].diff().dropna().round(6))) > 1  # not evenly spaced


@BOTH_LOADS
def test_time_cap_stops_new_requests(stream):
    with SimulatedServer(latency_s=0.2) as server:
        result = run_sweep(_backend(server, 1, stream=stream), PROMPTS,
                           SweepSpec(concurrency=(1,), requests=100, time_cap_s=0.5, max_tokens=4, warmup=0),
                           progress=False)
    assert 2 <= len(result.records) <= 5  # a few 0.2 s requests, far from 100


def test_simulated_results_are_labelled_and_meta_is_safe():
    with SimulatedServer() as server:
        # a plain config that forgot simulated=True: the server's fingerprint still labels it
        backend = make_backend({"name": "cloudish", "base_url": server.base_url, "model": "m",
                                "max_concurrency": 2})
        result = run_sweep(backend, PROMPTS, SweepSpec(concurrency=(2,), requests=2, max_tokens=4),
                           progress=False)
    assert result.records["simulated"].all()
    assert result.records["label"].eq("cloudish/m (simulated)").all()
    assert result.meta["label"] == "cloudish/m (simulated)"
    assert result.meta["backend"]["base_url"] == server.base_url
    assert result.meta["sweep"]["concurrency"] == [2]


def test_any_backend_works_and_a_bug_is_not_swallowed():
    fake = FakeLLM(respond=lambda messages: "a short answer")
    result = run_sweep(fake, PROMPTS, SweepSpec(concurrency=(1, 3), requests=5), progress=False)
    assert len(result.records) == 10 and result.records["ok"].all()
    # FakeLLM marks its completions simulated, and the label follows the completions
    assert result.records["simulated"].all() and result.records["label"].eq("fake/fake-llm (simulated)").all()
    assert sorted(result.records.loc[result.records["level"] == 3, "seq"]) == [0, 1, 2, 3, 4]
    # one warm-up call first, not one of the prompts and not recorded
    assert len(fake.calls) == 11 and "Warm-up" in fake.calls[0][-1]["content"]
    assert all("Warm-up" not in call[-1]["content"] for call in fake.calls[1:])

    def broken(messages):
        raise KeyError("a bug in the backend")

    with pytest.raises(KeyError):
        run_sweep(FakeLLM(respond=broken), PROMPTS, SweepSpec(concurrency=(2,), requests=4, warmup=0),
                  progress=False)


def test_a_client_cap_below_the_sweep_warns():
    with SimulatedServer() as server:
        backend = make_backend({"preset": "simulated", "base_url": server.base_url, "max_concurrency": 1})
        with pytest.warns(UserWarning, match="only 1 calls in flight"):
            run_sweep(backend, PROMPTS, SweepSpec(concurrency=(2,), requests=2, max_tokens=4), progress=False)


@pytest.mark.parametrize("fields", [
    {"concurrency": (), "rates": ()}, {"concurrency": (0,)}, {"rates": (-1.0,)}, {"requests": 0},
    {"time_cap_s": 0}, {"arrivals": "burst"}, {"params": {"max_tokens": 3}}, {"warmup": -1},
])
def test_bad_sweeps_are_config_errors(fields):
    with pytest.raises(ConfigError):
        SweepSpec(**fields)


def test_bench_backend_refuses_a_response_cache_and_lifts_the_client_cap():
    with pytest.raises(ConfigError, match="cache"):
        bench_backend({"preset": "simulated", "base_url": "http://127.0.0.1:9/v1", "cache": "x.sqlite"}, 4)
    backend = bench_backend({"preset": "simulated", "base_url": "http://127.0.0.1:9/v1"}, 32)
    assert backend.config.max_concurrency == 32


def test_an_unreachable_backend_fails_at_warm_up_instead_of_recording_every_failure():
    import socket

    from lyra_lab.backends import BackendError

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    backend = bench_backend({"preset": f"llamacpp/http://127.0.0.1:{port}/v1"}, 2, max_attempts=1)
    with pytest.raises(BackendError, match="no HTTP status"):
        run_sweep(backend, PROMPTS, SweepSpec(concurrency=(1, 2), requests=50), progress=False)


@BOTH_LOADS
def test_retries_and_slot_waits_are_the_client_queue_not_e2el(stream):
    # One slot in the client for 2 workers, the first attempt of the first request answered 503 then retried
    # 0.2 s later: that wait and the other worker's wait for the slot are client queue, each request's E2EL
    # runs from sending the request that answered to its last chunk carrying choices (vLLM's rules).
    with SimulatedServer(latency_s=0.05, tokens_per_s=400) as server:
        server.enqueue("503")
        backend = make_backend({"preset": "simulated", "base_url": server.base_url, "max_concurrency": 1,
                                "stream": stream, "max_attempts": 2, "retry_base_s": 0.2, "retry_max_s": 0.2})
        with pytest.warns(UserWarning, match="queue in the client"):
            result = run_sweep(backend, PROMPTS, SweepSpec(concurrency=(2,), requests=4, max_tokens=8, warmup=0),
                               progress=False)
    rec = result.records.sort_values("seq")
    assert rec["ok"].all() and rec["attempts"].sum() == 5
    retried = rec[rec["attempts"] == 2].iloc[0]
    assert retried["client_queue_time_s"] >= 0.2  # the backoff before the answering request
    assert retried["retry_s"] >= 0.2
    assert (rec["client_queue_time_s"] >= rec["queue_s"] + rec["retry_s"] - 1e-3).all()
    assert (rec["client_queue_time_s"] > 0.05).sum() >= 2  # the other worker waited for the one slot
    # E2EL inside the answering attempt, the call as the caller felt it around both
    assert (rec["e2el_s"] <= rec["service_s"]).all() and (rec["e2el_s"] >= 0.05 + 8 / 400 - 1e-3).all()
    assert (rec["client_queue_time_s"] + rec["e2el_s"] <= rec["latency_s"] + 1e-6).all()
    s = result.summary().iloc[0]
    assert s["e2el_p99_s"] < 0.2 < s["e2el_including_client_queue_p99_s"]
    assert s["streamed"] == (4 if stream else 0)
