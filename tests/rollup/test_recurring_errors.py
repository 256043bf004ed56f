"""A rollup call the provider refuses itself passes its recurrence on: ``failed.rollup.<reason>``, not healable."""

from __future__ import annotations

import pytest

from lyra_lab.backends import BackendError, FakeLLM
from lyra_lab.rollup._base import RollupFailed, ask, failed


class Refusing(FakeLLM):
    def __init__(self, status: int):
        super().__init__()
        self.status = status

    def complete(self, messages, **params):
        raise BackendError(self.name, "the request exceeds the available context size", status=self.status,
                           gave_up="not_retryable" if self.status == 400 else "attempts")


@pytest.mark.parametrize("status, recurs, metric", [
    (400, "context_overflow", "failed.rollup.context_overflow"),
    (503, None, "degraded.rollup.unchanged"),
])
def test_a_refused_rollup_call_is_counted_by_whether_it_recurs(status, recurs, metric):
    with pytest.raises(RollupFailed) as raised:
        ask(Refusing(status), "digest these", 16, step="digest 2024-W03")
    assert raised.value.recurs == recurs
    assert failed("time_ladder", raised.value, []).metric == metric
