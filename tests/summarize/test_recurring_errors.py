"""A summarizer passes on whether its failed calls recur (``BackendError.recurs``), never deciding it again.

Before, a summarizer with nothing usable raised a new ``BackendError`` without the failed call's status,
so a call answered HTTP 400 every time was a transient cell failure, sent again at every resume.
"""

from __future__ import annotations

import pytest

from lyra_lab.backends import BackendError, FakeLLM
from lyra_lab.chunking import TurnWindowChunker
from lyra_lab.corpus import Turn
from lyra_lab.summarize import MapReduceSummarizer, RefineSummarizer, SinglePassSummarizer

TURNS = [Turn(f"t{i}", "c", f"s{i // 2}", "user", f"Fact number {i}: item{i} is blue.") for i in range(4)]
CHUNKS = TurnWindowChunker(max_turns=2).chunk(TURNS)  # 2 chunks: item0-1, item2-3
MERGE = "Combine the summaries above"  # in the merge prompt only


class Refusing(FakeLLM):
    """A fake answering ``status`` (with ``message``) to every chunk call whose prompt holds one of ``items``.

    A merge call (which quotes a failed chunk's excerpt) is answered.
    """

    def __init__(self, statuses: dict[str, int], message: str = "bad request"):
        super().__init__()
        self.statuses, self.message = statuses, message

    def complete(self, messages, **params):
        text = messages[-1]["content"]
        for item, status in self.statuses.items() if MERGE not in text else ():
            if item in text:
                raise BackendError(self.name, self.message, status=status, gave_up="not_retryable")
        return super().complete(messages, **params)


@pytest.mark.parametrize("summarizer", [SinglePassSummarizer(), MapReduceSummarizer(), RefineSummarizer()],
                         ids=["single_pass", "map_reduce", "refine"])
def test_nothing_usable_raises_the_failed_calls_status_and_recurrence(summarizer):
    with pytest.raises(BackendError) as raised:
        summarizer.summarize(CHUNKS, Refusing({"item1": 400, "item3": 400}, "prompt is too long"))
    assert raised.value.status == 400 and raised.value.recurs == "context_overflow"


def test_it_recurs_only_when_every_failed_call_does():
    with pytest.raises(BackendError) as raised:
        MapReduceSummarizer().summarize(CHUNKS, Refusing({"item1": 400, "item3": 503}))
    assert raised.value.recurs is None  # one of them may pass: the next run tries again


def test_a_fallback_for_a_call_that_recurs_is_counted_failed_for_good():
    summary = MapReduceSummarizer().summarize(CHUNKS, Refusing({"item1": 400}))
    (lost,) = summary.degraded
    assert lost.recurs == "bad_request" and lost.metric == "failed.summarize.bad_request"
    summary = MapReduceSummarizer().summarize(CHUNKS, Refusing({"item1": 503}))
    (lost,) = summary.degraded
    assert lost.recurs is None and lost.metric == "degraded.summarize.chunk_excerpt"
