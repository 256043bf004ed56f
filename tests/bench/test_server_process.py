"""A simulated server in its own process: its request log's timings, and the bodies it was sent when asked."""

from __future__ import annotations

import pytest

from lyra_lab.backends import BackendConfig, OpenAIBackend, SimulatedSpec
from lyra_lab.bench import ServerProcess

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Carol moved to Lyon in May."}]


def test_a_server_process_keeps_the_bodies_it_answered_only_when_asked():
    with ServerProcess(SimulatedSpec(), keep_bodies=True) as server:
        backend = OpenAIBackend(BackendConfig(name="s", base_url=server.base_url, model="m", simulated=True,
                                              max_attempts=1, stream=False, params={"top_k": 40}))
        backend.complete(MESSAGES, max_tokens=3)
        backend.complete(MESSAGES[1:], max_tokens=2)
        first, second = server.bodies()
        assert first == {"model": "m", "messages": MESSAGES, "max_tokens": 3, "top_k": 40}
        assert second["messages"] == MESSAGES[1:] and second["max_tokens"] == 2
        assert [s.status for s in server.served()] == [200, 200]
        server.reset()
        assert server.bodies() == []
    with ServerProcess(SimulatedSpec()) as server:
        with pytest.raises(ValueError, match="keep_bodies=True"):
            server.bodies()
