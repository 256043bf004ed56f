"""Retries against injected faults, checked from the simulated server's own request log."""

from __future__ import annotations

import email.utils
import logging
import time
from types import SimpleNamespace

import pytest
import tenacity

from lyra_lab.backends import BackendConfig, BackendError, OpenAIBackend, RetryPolicy, SimulatedServer
from lyra_lab.backends import RetryEvent, report_retries
from lyra_lab.backends._retry import (CallTimes, _WaitRetryAfterOrBackoff, call_with_retries, provider_message,
                                      retry_after_s, to_backend_error)

MESSAGES = [{"role": "user", "content": "Bob sold his bike. He bought a kayak. He paddles on Sundays."}]


@pytest.fixture(scope="module")
def server():
    with SimulatedServer(retry_after_s=0.2, hang_s=20) as srv:
        yield srv


@pytest.fixture
def sim(server):
    server.reset()
    yield server
    server.reset()


def _backend(server: SimulatedServer, **fields) -> OpenAIBackend:
    config = dict(name="simulated", base_url=server.base_url, model="sim", simulated=True,
                  max_attempts=3, retry_base_s=0.01, retry_max_s=0.05, timeout_s=0.5)
    return OpenAIBackend(BackendConfig(**{**config, **fields}))


@pytest.mark.parametrize("fault", ["429", "500", "502", "503", "504", "529", "hang", "cut", "malformed"])
@pytest.mark.parametrize("stream", [True, False])
def test_one_fault_then_success_takes_two_attempts(sim, call, fault, stream):
    sim.enqueue(fault, "ok")
    # 0.5 s per attempt ends a hang quickly; the others get room, or under load the answering
    # stream itself can time out and be sent again (a third request, seen once in CI)
    completion = call(_backend(sim, stream=stream, timeout_s=0.5 if fault == "hang" else 5), MESSAGES)
    log = sim.chat_log()
    assert [r.outcome for r in log] == [fault, "ok"]
    assert completion.meta["attempts"] == 2
    assert completion.text and completion.text in MESSAGES[0]["content"]


def test_recovers_within_the_policy_from_a_run_of_faults(sim, call):
    sim.enqueue("529", "hang", "cut", "ok")
    completion = call(_backend(sim, max_attempts=4), MESSAGES)
    assert [r.outcome for r in sim.chat_log()] == ["529", "hang", "cut", "ok"]
    assert completion.meta["attempts"] == 4


@pytest.mark.parametrize("fault, status", [("503", 503), ("529", 529), ("429", 429), ("500", 500)])
def test_gives_up_after_max_attempts_with_status_and_provider_message(sim, call, fault, status):
    sim.enqueue(*[fault] * 3, "ok")
    with pytest.raises(BackendError) as info:
        call(_backend(sim, max_attempts=3), MESSAGES)
    error = info.value
    assert len(sim.chat_log()) == 3  # exactly max_attempts requests, the "ok" never reached
    assert error.status == status and error.attempts == 3
    assert f"HTTP {status}" in str(error)
    assert f"simulated {fault} fault (injected)" in str(error)


def test_a_hang_on_every_attempt_fails_as_a_timeout_without_status(sim, call):
    sim.enqueue("hang", "hang")
    with pytest.raises(BackendError) as info:
        call(_backend(sim, max_attempts=2, timeout_s=0.3), MESSAGES)
    assert info.value.status is None and info.value.attempts == 2
    assert "timed out" in str(info.value)
    assert [r.outcome for r in sim.chat_log()] == ["hang", "hang"]


@pytest.mark.parametrize("fault, status", [("400", 400)])
def test_client_errors_are_not_retried(sim, call, fault, status):
    sim.enqueue(fault, "ok")
    with pytest.raises(BackendError) as info:
        call(_backend(sim, max_attempts=4), MESSAGES)
    assert len(sim.chat_log()) == 1
    assert info.value.status == status and info.value.attempts == 1
    assert "simulated 400 fault (injected)" in str(info.value)


def test_retry_after_is_honoured_by_server_side_timestamps(sim):
    # backoff alone would wait ~0.01 s; the server asks for 0.2 s
    sim.enqueue("429", "ok")
    _backend(sim, retry_base_s=0.001, retry_max_s=0.002).complete(MESSAGES)
    first, second = sim.chat_log()
    assert first.status == 429 and second.status == 200
    assert second.received - first.finished >= 0.2


def test_retry_after_from_the_rate_limiter_is_honoured():
    with SimulatedServer(rate_limit_rps=4.0, rate_limit_burst=1) as server:
        backend = _backend(server, max_attempts=6, retry_base_s=0.001, retry_max_s=0.002)
        for _ in range(3):
            backend.complete(MESSAGES)
        log = server.chat_log()
    limited = [r for r in log if r.outcome == "rate_limited"]
    assert limited, "three back-to-back calls at 4 rps with burst 1 must hit the limit"
    assert sum(r.status == 200 for r in log) == 3
    for before, after in zip(log, log[1:]):
        if before.outcome == "rate_limited":
            # the 429 asked for the time to the bucket's next token: the retry waited at least that
            assert 0 < before.retry_after <= 0.25
            assert after.received - before.finished >= before.retry_after


def _exc(headers=None, body=None, status=None, message="boom"):
    return SimpleNamespace(response=SimpleNamespace(headers=headers or {}), body=body, status_code=status,
                           message=message)


def test_retry_after_parsing():
    assert retry_after_s(_exc({"retry-after": "0.25"})) == 0.25
    assert retry_after_s(_exc({"retry-after-ms": "1500", "retry-after": "9"})) == 1.5
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < retry_after_s(_exc({"retry-after": future})) <= 31
    assert retry_after_s(_exc({"retry-after": "soon"})) is None
    assert retry_after_s(_exc({})) is None
    assert retry_after_s(ValueError("no response")) is None


def test_wait_prefers_retry_after_capped_else_backs_off_with_jitter():
    policy = RetryPolicy(max_attempts=5, base_delay_s=0.1, max_delay_s=1.0, max_retry_after_s=2.0)
    wait = _WaitRetryAfterOrBackoff(policy)

    def state(exc, attempt):
        s = tenacity.RetryCallState(tenacity.Retrying(), fn=None, args=(), kwargs={})
        s.attempt_number = attempt
        s.outcome = tenacity.Future(attempt)
        s.outcome.set_exception(exc)
        return s

    class Failure(Exception):
        def __init__(self, headers):
            self.response = SimpleNamespace(headers=headers)

    # Retry-After is honoured (never earlier) with up to one base delay of jitter on top.
    asked = [wait(state(Failure({"retry-after": "0.7"}), 1)) for _ in range(20)]
    assert all(0.7 <= w <= 0.8 for w in asked) and len(set(asked)) > 10
    capped = [wait(state(Failure({"retry-after": "3600"}), 1)) for _ in range(20)]
    assert all(2.0 <= w <= 2.1 for w in capped)
    assert all(0.05 <= w <= 0.1 for w in (wait(state(Failure({"retry-after": "0.05"}), 1)) for _ in range(20)))
    backoffs = [wait(state(Failure({}), n)) for n in (1, 2, 3, 4) for _ in range(20)]
    assert all(0.1 <= b <= 1.0 for b in backoffs)
    assert len(set(backoffs)) > 10  # jittered
    assert min(wait(state(Failure({}), 3)) for _ in range(20)) >= 0.4  # 0.1 * 2**2


def test_provider_message_from_body_shapes():
    assert provider_message(_exc(body={"message": "inner", "type": "x"})) == "inner"
    assert provider_message(_exc(body={"error": {"message": "nested"}})) == "nested"
    assert provider_message(_exc(body="plain text error")) == "plain text error"
    assert provider_message(_exc(body=None, message="fallback")) == "fallback"


def test_final_error_is_truncated_and_masks_secrets():
    failure = _exc(body={"message": "key sk-abc-123 rejected " + "x" * 900}, status=None)
    error = to_backend_error("b", failure, 2, secrets=("sk-abc-123",))
    assert "sk-abc-123" not in str(error) and "***" in str(error)
    assert len(error.provider_message) == 500


@pytest.mark.parametrize("fields", [{"max_attempts": 0}, {"base_delay_s": -1}])
def test_policy_validation(fields):
    with pytest.raises(ValueError):
        RetryPolicy(**fields)


# --- every retry reaches the retry sink of the calling context ---------------------------------------

def test_each_retry_reaches_the_sink_with_attempt_status_kind_and_wait(sim):
    sim.enqueue("429", "503", "hang", "ok")
    seen: list[RetryEvent] = []
    with report_retries(seen.append):
        completion = _backend(sim, max_attempts=4).complete(MESSAGES)
    assert completion.meta["attempts"] == 4
    assert [(e.attempt, e.status, e.error) for e in seen] == [
        (1, 429, "RateLimitError"), (2, 503, "InternalServerError"), (3, None, "APITimeoutError")]
    assert all(e.backend == "simulated" and e.max_attempts == 4 for e in seen)
    # the 429 asked for Retry-After: 0.2 (the module's server); the wait honours it, the others back off
    assert seen[0].retry_after_s == 0.2 and seen[0].wait_s >= 0.2
    assert seen[1].retry_after_s is None and 0 <= seen[1].wait_s <= 0.05
    assert seen[0].message == "simulated 429 fault (injected)"


def test_a_final_failure_reports_only_the_attempts_that_were_retried(sim):
    sim.enqueue("500", "500", "500")
    seen: list[RetryEvent] = []
    with report_retries(seen.append), pytest.raises(BackendError):
        _backend(sim).complete(MESSAGES)
    assert [e.attempt for e in seen] == [1, 2]  # the third failed for good: no retry follows it


def test_no_sink_outside_the_context_and_a_failing_sink_breaks_nothing(sim, caplog):
    caplog.set_level(logging.WARNING, logger="lyra_lab.backends")
    seen: list[RetryEvent] = []
    with report_retries(seen.append):
        pass
    sim.enqueue("503", "ok")
    _backend(sim).complete(MESSAGES)
    assert seen == []

    def broken(event):
        raise RuntimeError("sink down")

    sim.enqueue("503", "ok")
    with report_retries(broken):
        assert _backend(sim).complete(MESSAGES).meta["attempts"] == 2
    assert any("retry sink" in r.getMessage() for r in caplog.records)


def test_the_sink_belongs_to_the_calling_thread(sim):
    """A sink set in one thread does not see another thread's retries (cells sharing a backend)."""
    import threading

    backend = _backend(sim)
    seen: list[RetryEvent] = []
    sim.enqueue("503", "ok")
    with report_retries(seen.append):
        other = threading.Thread(target=backend.complete, args=(MESSAGES,))
        other.start()
        other.join()
    assert [r.outcome for r in sim.chat_log()] == ["503", "ok"] and seen == []


def test_the_sink_never_sees_a_secret():
    """The provider's message is masked with the backend's secrets and any URL credentials."""
    import httpx
    import openai

    policy = RetryPolicy(max_attempts=2, base_delay_s=0.0)
    response = httpx.Response(429, request=httpx.Request("POST", "http://127.0.0.1/v1/chat/completions"))
    body = {"message": "key sk-abc-123 at https://lyra:pw-xyz@host/v1 is over quota"}
    failures = iter([openai.RateLimitError("over quota", response=response, body=body)])

    def flaky(timeout_s):
        for failure in failures:
            raise failure
        return "ok"

    seen: list[RetryEvent] = []
    with report_retries(seen.append):
        assert call_with_retries(flaky, policy, "b", secrets=("sk-abc-123",), times=CallTimes(1)) == ("ok", 2)
    [event] = seen
    assert (event.attempt, event.status, event.error) == (1, 429, "RateLimitError")
    assert event.message == "key *** at https://***@host/v1 is over quota"
    assert "sk-abc-123" not in str(event.fields()) and "pw-xyz" not in str(event.fields())


# --- attempts sized to the fault rate, configurable per backend -------------------------------------

def test_the_default_attempts_are_the_fewest_that_keep_a_1000_call_run_at_20_percent_faults_lossless():
    """With independent faults at rate p, one of N calls exhausts n attempts with chance 1 - (1 - p**n)**N."""
    from lyra_lab.backends import DEFAULT_MAX_ATTEMPTS, make_backend
    from lyra_lab.backends._retry import loss_chance

    n = DEFAULT_MAX_ATTEMPTS
    assert loss_chance(0.2, n) < 0.01 <= loss_chance(0.2, n - 1)
    assert loss_chance(0.2, 4) == pytest.approx(1 - (1 - 0.2 ** 4) ** 1000)
    assert RetryPolicy().max_attempts == n
    assert BackendConfig(name="b", base_url="http://127.0.0.1:1/v1", model="m").max_attempts == n
    assert make_backend({"preset": "simulated", "base_url": "http://127.0.0.1:1/v1"}).config.max_attempts == n


def test_max_attempts_is_a_backend_key_checked_at_the_edge_and_recorded():
    from lyra_lab import ConfigError
    from lyra_lab.backends import make_backend

    spec = {"preset": "simulated", "base_url": "http://u:pw@127.0.0.1:1/v1"}
    backend = make_backend({**spec, "max_attempts": 3})
    assert backend.config.retry_policy.max_attempts == 3
    assert backend.capabilities.description["max_attempts"] == 3  # what a run folder records
    assert backend.config.to_record()["max_attempts"] == 3 and "pw" not in str(backend.config.to_record())
    for bad in (0, -2, 2.5, True, "many"):
        with pytest.raises(ConfigError) as info:
            make_backend({**spec, "max_attempts": bad})
        assert str(info.value) == f"backend 'simulated': max_attempts must be an integer >= 1, got {bad!r}"
    with pytest.raises(ConfigError, match=r"^backend 'simulated': retry_base_s must be a number >= 0, got 'x'$"):
        make_backend({**spec, "retry_base_s": "x"})


def test_completions_and_errors_say_how_many_attempts_they_took(sim):
    sim.enqueue("529", "500", "ok")
    assert _backend(sim).complete(MESSAGES).attempts == 3
    sim.enqueue("500", "500", "500")
    with pytest.raises(BackendError) as info:
        _backend(sim).complete(MESSAGES)
    assert (info.value.attempts, info.value.gave_up) == (3, "attempts")


def test_a_backend_error_crosses_a_process_boundary_whole():
    import pickle

    error = BackendError("b", "overloaded", status=529, attempts=8, gave_up="deadline")
    back = pickle.loads(pickle.dumps(error))
    assert (back.backend, back.status, back.attempts, back.gave_up, str(back)) == (
        "b", 529, 8, "deadline", str(error))
