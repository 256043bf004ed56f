"""Deadlines that hold: timeout_s bounds each attempt, a caller's deadline bounds the whole call.

Checked against the simulated server's own request log: a hung attempt is given
up after the backend's ``timeout_s`` (never a caller's wider bound) and retried;
retries, backoff and the wait for a concurrency slot all end at the deadline, and
a call that cannot finish in time raises ``BackendError`` with ``gave_up ==
"deadline"``.
"""

from __future__ import annotations

import threading
import time

import pytest

from lyra_lab.backends import (BackendConfig, BackendError, CachedBackend, OpenAIBackend, ResponseCache,
                               SimulatedServer)

MESSAGES = [{"role": "user", "content": "Ann moved to Lisbon. She teaches violin. Her cat is called Miso."}]


@pytest.fixture(scope="module")
def server():
    with SimulatedServer(retry_after_s=5.0, hang_s=30) as srv:
        yield srv


@pytest.fixture
def sim(server):
    server.reset()
    yield server
    server.reset()


def _backend(server: SimulatedServer, **fields) -> OpenAIBackend:
    config = dict(name="simulated", base_url=server.base_url, model="sim", simulated=True,
                  retry_base_s=0.01, retry_max_s=0.05)
    return OpenAIBackend(BackendConfig(**{**config, **fields}))


@pytest.mark.parametrize("stream", [True, False])
def test_a_hung_attempt_is_given_up_after_timeout_s_and_retried_under_a_wide_deadline(sim, stream):
    """timeout_s = 2 under a caller's 120 s deadline: the hang costs ~2 s, not 120 s (nor the server's 30 s)."""
    sim.enqueue("hang", "ok")
    started = time.monotonic()
    completion = _backend(sim, timeout_s=2, stream=stream).complete(MESSAGES, deadline=started + 120)
    took = time.monotonic() - started
    assert [r.outcome for r in sim.chat_log()] == ["hang", "ok"]
    assert completion.attempts == 2 == completion.meta["attempts"]
    assert 2.0 <= took < 5.0, took


def test_the_deadline_bounds_the_whole_call_retries_and_backoff_included(sim):
    sim.enqueue(*["hang"] * 10)
    started = time.monotonic()
    with pytest.raises(BackendError) as info:
        _backend(sim, timeout_s=0.5, max_attempts=8).complete(MESSAGES, deadline=started + 1.3)
    took = time.monotonic() - started
    error = info.value
    assert error.gave_up == "deadline" and "stopped by the call's deadline" in str(error)
    assert error.status is None and "timed out" in str(error)
    # 0.5 s attempts: it retried within the deadline, and started none that would have had
    # less than min(timeout_s, 1 s) left (a third would have had ~0.3 s)
    assert error.attempts == len(sim.chat_log()) == 2
    assert took < 1.3 + 0.3, took


def test_an_attempt_gets_only_the_time_left_before_the_deadline(sim):
    sim.enqueue("hang")
    started = time.monotonic()
    with pytest.raises(BackendError) as info:
        _backend(sim, timeout_s=30, max_attempts=1).complete(MESSAGES, deadline=started + 0.6)
    assert 0.6 <= time.monotonic() - started < 1.2
    assert info.value.attempts == 1


def test_no_retry_waits_out_a_retry_after_that_ends_past_the_deadline(sim):
    """The server asks for 5 s; the deadline is 2 s away: stop now instead of sleeping into it."""
    sim.enqueue("429", "ok")
    started = time.monotonic()
    with pytest.raises(BackendError) as info:
        _backend(sim, timeout_s=5).complete(MESSAGES, deadline=started + 2)
    assert time.monotonic() - started < 1.0
    assert (info.value.status, info.value.attempts, info.value.gave_up) == (429, 1, "deadline")
    assert [r.outcome for r in sim.chat_log()] == ["429"]


def test_a_deadline_already_past_sends_nothing(sim):
    with pytest.raises(BackendError) as info:
        _backend(sim).complete(MESSAGES, deadline=time.monotonic() - 1)
    assert (info.value.attempts, info.value.gave_up) == (0, "deadline")
    assert sim.chat_log() == []


def test_waiting_for_a_concurrency_slot_counts_against_the_deadline():
    with SimulatedServer(latency_s=1.5) as server:
        backend = _backend(server, max_concurrency=1, timeout_s=10)
        first = threading.Thread(target=backend.complete, args=(MESSAGES,))
        first.start()
        time.sleep(0.2)  # the first call holds the only slot
        started = time.monotonic()
        with pytest.raises(BackendError, match="waiting for one of 1 concurrency slot") as info:
            backend.complete(MESSAGES, deadline=started + 0.4)
        took = time.monotonic() - started
        first.join()
        requests = len(server.chat_log())
    assert (info.value.attempts, info.value.gave_up) == (0, "deadline")
    assert 0.4 <= took < 1.0 and requests == 1  # the second call never reached the server


def test_a_stream_trickling_in_slower_than_the_deadline_is_cut_at_it():
    """Each chunk arrives well within timeout_s, but the answer as a whole would outlast the deadline."""
    with SimulatedServer(tokens_per_s=5) as server:
        backend = _backend(server, timeout_s=5, stream=True, max_attempts=3)
        started = time.monotonic()
        with pytest.raises(BackendError) as info:
            backend.complete(MESSAGES, max_tokens=60, deadline=started + 1.0)  # 14 words at 5 a second: ~2.8 s
        took = time.monotonic() - started
    assert info.value.gave_up == "deadline" and "mid-stream" in str(info.value)
    assert info.value.attempts == 1 and took < 1.6, took


def test_without_a_deadline_attempts_run_out_instead(sim):
    sim.enqueue("503", "503", "503")
    with pytest.raises(BackendError) as info:
        _backend(sim, max_attempts=3).complete(MESSAGES)
    assert (info.value.attempts, info.value.gave_up) == (3, "attempts")
    sim.reset()
    sim.enqueue("400")
    with pytest.raises(BackendError) as info:
        _backend(sim, max_attempts=3).complete(MESSAGES)
    assert (info.value.attempts, info.value.gave_up) == (1, "not_retryable")


def test_the_response_cache_passes_the_deadline_on_and_keys_without_it(sim, tmp_path):
    with ResponseCache(tmp_path / "r.sqlite") as cache:
        backend = CachedBackend(_backend(sim, timeout_s=0.5), cache)
        sim.enqueue("503", "ok")
        paid = backend.complete(MESSAGES, deadline=time.monotonic() + 30)
        hit = backend.complete(MESSAGES, deadline=time.monotonic() + 60)
        with pytest.raises(BackendError, match="deadline"):
            backend.complete([{"role": "user", "content": "Something else."}], deadline=time.monotonic() - 1)
    assert (paid.attempts, paid.cached) == (2, False)
    assert (hit.attempts, hit.cached, hit.text) == (0, True, paid.text)
    assert len(sim.chat_log()) == 2
