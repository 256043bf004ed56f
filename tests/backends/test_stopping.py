"""A call of a stopped run sends nothing more: its attempt in flight is cancelled, its retries refused.

A thread calls the simulated server, which answers 503 every time, inside a run's ``StopToken``
(``stoppable``); the run stops while the call sits in its retries.  The call ends with
``CallsStopped`` at once (not after its 8 attempts), the server receives no request after the stop
but the one attempt that may be on its way, and no retry is reported after it.  A call made outside
any run is not touched by another run's stop.
"""

from __future__ import annotations

import threading
import time

import pytest

from lyra_lab.backends import (BackendConfig, BackendError, CallsStopped, OpenAIBackend, SimulatedServer, StopToken,
                               report_retries, stoppable)


def backend(server: SimulatedServer, stream: bool) -> OpenAIBackend:
    return OpenAIBackend(BackendConfig(name="simulated", base_url=server.base_url, model="sim", simulated=True,
                                       max_attempts=8, retry_base_s=0.3, retry_max_s=0.3, timeout_s=5,
                                       stream=stream))


@pytest.mark.parametrize("stream", [True, False], ids=["request-loop", "thread"])
def test_a_stopped_run_stops_its_call_and_every_retry(stream):
    with SimulatedServer(latency_s=0.05) as server:
        server.fail_matching("503")
        llm, token, ended, retries = backend(server, stream), StopToken(), [], []

        def call() -> None:
            with stoppable(token), report_retries(retries.append):
                try:
                    llm.complete([{"role": "user", "content": "hello"}], max_tokens=4)
                except BaseException as exc:  # noqa: BLE001 - what the call ended with is the finding
                    ended.append((time.monotonic(), exc))

        thread = threading.Thread(target=call)
        thread.start()
        while len(server.chat_log()) < 2:
            time.sleep(0.01)
        stopped, reported = time.monotonic(), len(retries)
        token.stop()
        thread.join(5)
        ((at, exc),) = ended
        assert isinstance(exc, CallsStopped) and at - stopped < 1.0, exc
        time.sleep(1.0)  # the backoff is 0.3 s: a call left running would have retried thrice
        assert sum(1 for r in server.chat_log() if r.received > stopped) <= 1
        assert len(retries) == reported  # nothing reported after the stop (a run's log is closing)
        llm.close()


def test_a_call_outside_the_stopped_run_goes_on():
    with SimulatedServer(latency_s=0.01) as server:
        llm, other = backend(server, True), StopToken()
        with stoppable(other):
            pass
        other.stop()
        assert llm.complete([{"role": "user", "content": "hello"}], max_tokens=4).text
        server.fail_matching("400")
        with pytest.raises(BackendError):  # not CallsStopped: this call belongs to no stopped run
            llm.complete([{"role": "user", "content": "again"}], max_tokens=4)
        llm.close()
