"""Fault rules of the simulated server: one named call made to fail, on every attempt or only the Nth time."""

from __future__ import annotations

import pytest

from lyra_lab.backends import BackendConfig, BackendError, FaultRule, OpenAIBackend, SimulatedServer, SimulatedSpec


def _backend(server: SimulatedServer, **fields) -> OpenAIBackend:
    config = dict(name="simulated", base_url=server.base_url, model="sim", simulated=True, max_attempts=3,
                  retry_base_s=0.001, retry_max_s=0.002, timeout_s=2)
    return OpenAIBackend(BackendConfig(**{**config, **fields}))


def ask(backend, text: str):
    return backend.complete([{"role": "user", "content": text}])


def test_a_rule_fails_every_attempt_of_the_matching_call_and_no_other():
    with SimulatedServer() as server:
        index = server.fail_matching("503", contains="item5", excludes="Combine the summaries")
        backend = _backend(server)
        assert ask(backend, "Bob owns item4.").attempts == 1
        with pytest.raises(BackendError) as info:
            ask(backend, "Bob owns item5.")
        assert ask(backend, "Bob owns item5.\nCombine the summaries above.").attempts == 1
        log = server.chat_log()
    assert (info.value.status, info.value.attempts, info.value.gave_up) == (503, 3, "attempts")
    assert [(r.outcome, r.rule) for r in log] == [("ok", None), *[("503", index)] * 3, ("ok", None)]


def test_skip_and_times_pick_the_nth_matching_request():
    """``skip=1, times=1``: the second matching request fails once; its retry and the others pass."""
    with SimulatedServer() as server:
        server.fail_matching("500", contains=("chunk", "Ann"), skip=1, times=1)
        backend = _backend(server)
        first = ask(backend, "chunk: Ann sings.")
        other = ask(backend, "chunk: Bea sings.")  # does not match: not counted
        second = ask(backend, "chunk: Ann sings.")
        third = ask(backend, "chunk: Ann sings.")
        log = server.chat_log()
    assert [c.attempts for c in (first, other, second, third)] == [1, 1, 2, 1]
    assert [r.outcome for r in log] == ["ok", "ok", "500", "ok", "ok"]


def test_rules_from_the_spec_survive_reset_with_fresh_counts_and_added_ones_do_not():
    spec = SimulatedSpec(fault_rules=({"outcome": "529", "contains": "Ann", "times": 1},))
    assert spec.fault_rules == (FaultRule("529", contains=("Ann",), times=1),)
    with SimulatedServer(spec) as server:
        server.fail_matching("503", contains="Bea")
        backend = _backend(server, max_attempts=1)
        with pytest.raises(BackendError, match="HTTP 529"):
            ask(backend, "Ann hums.")
        with pytest.raises(BackendError, match="HTTP 503"):
            ask(backend, "Bea hums.")
        server.reset()
        with pytest.raises(BackendError, match="HTTP 529"):  # the spec's rule counts afresh
            ask(backend, "Ann hums.")
        assert ask(backend, "Ann hums.").text and ask(backend, "Bea hums.").text  # times=1 spent; 503 rule gone


def test_the_enqueue_script_comes_first_and_rules_before_random_faults():
    with SimulatedServer(fault_rates={"500": 1.0}) as server:
        server.fail_matching("hang", contains="never")  # matches nothing here
        server.fail_matching("529", contains="Ann")
        server.enqueue("ok")
        backend = _backend(server, max_attempts=1)
        assert ask(backend, "Ann hums.").attempts == 1  # the script
        with pytest.raises(BackendError, match="HTTP 529"):
            ask(backend, "Ann hums.")  # the rule
        with pytest.raises(BackendError, match="HTTP 500"):
            ask(backend, "Bea hums.")  # the random draw


@pytest.mark.parametrize("fields, problem", [
    ({"outcome": "ok"}, "unknown outcome 'ok'"),
    ({"outcome": "418"}, "unknown outcome '418'"),
    ({"outcome": "503", "contains": ("",)}, "contains must be non-empty strings"),
    ({"outcome": "503", "skip": -1}, "skip must be an integer >= 0"),
    ({"outcome": "503", "times": 0}, "times must be an integer >= 1 or None"),
])
def test_bad_rules_are_refused_in_one_line(fields, problem):
    with pytest.raises(ValueError, match=problem):
        FaultRule(**fields)
