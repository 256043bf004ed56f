"""Starting a local Ray: a start that times out is shut down and tried again, up to START_ATTEMPTS.

Ray's own functions are replaced by fakes here (no Ray is started), so these run in a second.
"""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")

from lyra_lab._registry import ConfigError  # noqa: E402
from lyra_lab.experiments.executors import _ray  # noqa: E402

TIMEOUT = "The current node timed out during startup."


@pytest.fixture
def fake_ray(monkeypatch):
    """Ray with ``init`` failing the first ``calls['fail']`` times; counts init and shutdown calls."""
    calls = {"init": 0, "shutdown": 0, "fail": 0}

    def init(**kwargs):
        calls["init"] += 1
        assert kwargs["address"] == "local" and kwargs["_node_ip_address"] == "127.0.0.1"
        if calls["init"] <= calls["fail"]:
            raise Exception(TIMEOUT)  # what ray.init raises when its node does not come up

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "shutdown", lambda: calls.__setitem__("shutdown", calls["shutdown"] + 1))
    monkeypatch.setattr(ray.util, "get_node_ip_address", lambda: "127.0.0.1")
    return calls


def test_a_start_that_times_out_twice_is_shut_down_and_the_third_comes_up(fake_ray):
    fake_ray["fail"] = 2
    module, owned = _ray.connect(None, 2)
    assert module is ray and owned is True
    assert fake_ray["init"] == 3 and fake_ray["shutdown"] == 2  # each failed start cleaned up


def test_three_timed_out_starts_are_one_config_error(fake_ray):
    fake_ray["fail"] = 99
    with pytest.raises(ConfigError, match=r"could not start a local Ray in 3 attempts \(The current node timed out"):
        _ray.connect(None, 2)
    assert fake_ray["init"] == 3 and fake_ray["shutdown"] == 3


def test_a_first_start_that_comes_up_is_not_repeated(fake_ray):
    _ray.connect(None, 2)
    assert fake_ray["init"] == 1 and fake_ray["shutdown"] == 0
