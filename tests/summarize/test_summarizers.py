"""Summarizers against fakes: calls made, concurrency bound, timeouts, fallbacks, focus, events, prompts."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from lyra_lab._params import strategy_name
from lyra_lab import ConfigError
from lyra_lab.backends import BackendError, FakeLLM
from lyra_lab.chunking import AdaptiveChunker, Chunk, TurnWindowChunker
from lyra_lab.corpus import Turn
from lyra_lab.summarize import (
    DEFAULT_PROMPTS,
    SUMMARIZERS,
    MapReduceSummarizer,
    Prompts,
    RefineSummarizer,
    SinglePassSummarizer,
    Summarizer,
)

TURNS = [Turn(f"t{i}", "c", f"s{i // 2}", "user", f"fact number {i}: item{i} is blue") for i in range(8)]
CHUNKS = TurnWindowChunker(max_turns=2).chunk(TURNS)  # 4 chunks, 2 turns each


def content(messages) -> str:
    return messages[-1]["content"]


def is_merge(messages) -> bool:
    return "Combine the summaries above" in content(messages)


class SlowFake(FakeLLM):
    """A fake that sleeps per call and records the most calls in flight at once."""

    def __init__(self, delay: float = 0.05, hang_when=lambda m: False, **kwargs: Any):
        super().__init__(**kwargs)
        self.delay = delay
        self.hang_when = hang_when
        self.in_flight = 0
        self.peak = 0
        self.params: list[dict] = []
        self._count = threading.Lock()

    def complete(self, messages, **params):
        with self._count:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            self.params.append(params)
        try:
            time.sleep(5.0 if self.hang_when(messages) else self.delay)
            # a fake that ignores its deadline: the summarizer must still stop waiting at it
            return super().complete(messages, **{k: v for k, v in params.items() if k != "deadline"})
        finally:
            with self._count:
                self.in_flight -= 1


def test_all_summarizers_are_registered_and_conform():
    assert SUMMARIZERS.names() == ["map_reduce", "refine", "single_pass"]
    for name in SUMMARIZERS.names():
        summarizer = SUMMARIZERS.build(name)
        assert isinstance(summarizer, Summarizer)
        assert SUMMARIZERS.build(SUMMARIZERS.spec(summarizer)) == summarizer


def test_map_reduce_makes_n_chunk_calls_and_one_merge():
    llm = FakeLLM(respond=lambda m: "MERGED" if is_merge(m) else "partial " + content(m)[-12:])
    summary = MapReduceSummarizer().summarize(CHUNKS, llm)
    assert len(llm.calls) == len(CHUNKS) + 1 and sum(map(is_merge, llm.calls)) == 1
    assert summary.text == "MERGED" and not summary.partial and summary.errors == ()
    assert len(summary.calls) == 5 and summary.usage.calls == 5
    assert summary.turn_ids == tuple(t.id for t in TURNS)
    assert summary.decision == "map_reduce"
    merge_prompt = content(next(m for m in llm.calls if is_merge(m)))
    assert all(f"Part {i}:" in merge_prompt for i in range(1, 5))


def test_map_reduce_respects_the_concurrency_bound_and_passes_deadlines():
    llm = SlowFake(delay=0.1)
    started = time.monotonic()
    MapReduceSummarizer(max_concurrency=2, chunk_timeout_s=7, merge_timeout_s=3).summarize(
        TurnWindowChunker(max_turns=1).chunk(TURNS), llm)
    assert llm.peak == 2  # bounded, and the bound was actually used
    # each call gets a deadline for the whole call (a monotonic instant), never a per-attempt timeout
    assert all("timeout" not in p for p in llm.params)
    chunk_params, (merge_params,) = llm.params[:-1], llm.params[-1:]
    assert len(chunk_params) == 8
    assert all(p["max_tokens"] == 256 and p["temperature"] == 0 for p in chunk_params)
    assert all(started + 7 <= p["deadline"] <= time.monotonic() + 7 for p in chunk_params)
    assert started + 3 <= merge_params["deadline"] <= time.monotonic() + 3


def test_a_hung_chunk_times_out_and_its_excerpt_stands_in():
    llm = SlowFake(delay=0.0, hang_when=lambda m: "item2" in content(m) and not is_merge(m),
                   respond=lambda m: "MERGE OF " + content(m) if is_merge(m) else "ok")
    started = time.monotonic()
    summary = MapReduceSummarizer(chunk_timeout_s=0.5).summarize(CHUNKS, llm)
    assert time.monotonic() - started < 4  # did not wait for the 5 s hang
    assert summary.partial and len(summary.errors) == 1
    assert summary.errors[0].startswith("chunk 2/4:") and "timed out" in summary.errors[0]
    assert "[not summarized: raw excerpt]" in summary.text and "item2" in summary.text
    assert len(summary.calls) == 4  # 3 chunk calls + merge; the abandoned call is not counted


def test_a_failed_chunk_is_recorded_and_its_excerpt_used():
    llm = FakeLLM(fail=lambda m: "item5" in content(m) and not is_merge(m),
                  respond=lambda m: "MERGE OF " + content(m) if is_merge(m) else "ok")
    summary = MapReduceSummarizer().summarize(CHUNKS, llm)
    assert summary.partial and summary.errors[0].startswith("chunk 3/4:") and "HTTP 500" in summary.errors[0]
    assert "item5" in summary.text


def test_merge_failure_falls_back_to_the_partials():
    llm = FakeLLM(fail=is_merge, respond=lambda m: "summary of " + content(m)[-6:])
    events = []
    summary = MapReduceSummarizer().summarize(CHUNKS, llm, on_event=events.append)
    assert summary.partial and summary.errors[0].startswith("merge:") and "HTTP 500" in summary.errors[0]
    assert [line.startswith("Part ") for line in summary.text.split("\n\n")] == [True] * 4
    assert len(summary.calls) == 4
    merge_done = next(e for e in events if e.stage == "merge_done")
    assert merge_done.ok is False and merge_done.detail["fallback"]


def test_merge_timeout_falls_back_too():
    llm = SlowFake(delay=0.0, hang_when=is_merge)
    summary = MapReduceSummarizer(merge_timeout_s=0.3).summarize(CHUNKS, llm)
    assert summary.partial and "timed out" in summary.errors[0] and summary.text.startswith("Part 1:")


def test_every_chunk_failing_raises_backend_error_with_the_provider_message():
    llm = FakeLLM(fail=lambda m: True)
    events = []
    with pytest.raises(BackendError, match="all 4 chunk calls failed.*HTTP 500.*injected failure"):
        MapReduceSummarizer().summarize(CHUNKS, llm, on_event=events.append)
    assert events[-1].stage == "complete" and events[-1].ok is False


def test_one_chunk_needs_no_merge():
    llm = FakeLLM(outputs=["the only summary"])
    summary = MapReduceSummarizer().summarize(CHUNKS[:1], llm)
    assert len(llm.calls) == 1 and summary.text == "the only summary" and summary.decision == "single_pass"


def test_adaptive_plan_decision_is_reported():
    plan = AdaptiveChunker(target_tokens=40).plan(TURNS)
    assert plan.decision == "oversize"
    events = []
    summary = MapReduceSummarizer().summarize(plan, FakeLLM(), on_event=events.append)
    assert summary.decision == "oversize"
    strategy = next(e for e in events if e.stage == "strategy")
    assert strategy.detail["decision"] == "oversize" and "must chunk" in strategy.detail["reason"]


@pytest.mark.parametrize("summarizer", [SinglePassSummarizer(), MapReduceSummarizer(), RefineSummarizer()],
                         ids=strategy_name)
def test_focus_reaches_every_prompt(summarizer):
    llm = FakeLLM()
    summarizer.summarize(CHUNKS, llm, focus="keep unresolved decisions")
    assert llm.calls and all("keep unresolved decisions" in content(m) for m in llm.calls)
    llm = FakeLLM()
    summarizer.summarize(CHUNKS, llm)
    assert not any("Focus on" in content(m) for m in llm.calls)


def test_events_come_in_order_with_counts():
    events = []
    MapReduceSummarizer(max_concurrency=1).summarize(CHUNKS, FakeLLM(), on_event=events.append)
    assert [e.stage for e in events] == ["load", "strategy"] + ["chunk_done"] * 4 + [
        "merge_started", "merge_done", "complete"]
    assert events[0].n == 4 and events[0].detail["turns"] == 8
    done = [e for e in events if e.stage == "chunk_done"]
    assert [(e.i, e.n, e.ok) for e in done] == [(i, 4, True) for i in range(1, 5)]
    assert all(e.duration_s >= 0 for e in done) and events[-1].ok is True


@pytest.mark.parametrize("name", ["single_pass", "map_reduce", "refine"])
def test_a_raising_callback_never_breaks_the_work(name, caplog):
    def explode(event):
        raise RuntimeError("progress sink is broken")

    summary = SUMMARIZERS.build(name).summarize(CHUNKS, FakeLLM(outputs=["x"] * 10), on_event=explode)
    assert summary.text == "x" and not summary.partial
    assert "progress sink is broken" in caplog.text


def test_refine_folds_the_running_summary_into_each_step():
    llm = FakeLLM(outputs=["S1", "S2", "S3", "S4"])
    summary = RefineSummarizer().summarize(CHUNKS, llm)
    assert summary.text == "S4" and len(summary.calls) == 4
    assert content(llm.calls[1]).startswith("Earlier: S1\n") and "item2" in content(llm.calls[1])
    assert content(llm.calls[3]).startswith("Earlier: S3\n")


def test_refine_keeps_going_past_a_failed_step():
    llm = FakeLLM(fail=lambda m: "\n\nuser: fact number 2" in content(m), respond=lambda m: "summary")
    summary = RefineSummarizer().summarize(CHUNKS, llm)
    assert summary.partial and summary.errors[0].startswith("chunk 2/4:") and len(summary.calls) == 3
    assert "raw excerpt" in content(llm.calls[2])  # step 3 folds in the excerpt of failed step 2


def test_single_pass_joins_chunks_without_their_overlap_and_raises_on_failure():
    chunks = [Chunk(0, "alpha\nbeta\n"), Chunk(1, "beta\ngamma\n", overlap_chars=5)]
    llm = FakeLLM(outputs=["s"])
    SinglePassSummarizer().summarize(chunks, llm)
    assert content(llm.calls[0]).startswith("alpha\nbeta\ngamma\n\nSummarize")
    with pytest.raises(BackendError, match="HTTP 500"):
        SinglePassSummarizer().summarize(chunks, FakeLLM(fail=lambda m: True))


@pytest.mark.parametrize("name", ["single_pass", "map_reduce", "refine"])
def test_no_chunks_means_no_calls(name):
    llm = FakeLLM()
    summary = SUMMARIZERS.build(name).summarize([], llm)
    assert summary.text == "" and summary.turn_ids == () and llm.calls == []


def test_prompt_overrides_are_used_and_validated():
    prompts = {"chunk": "CHUNK<{transcript}>", "merge": "MERGE<{partials}>{focus}", "focus": "!{focus}!",
               "system": "be brief"}
    spec = {"name": "map_reduce", "prompts": prompts}
    summarizer = SUMMARIZERS.build(spec)
    assert isinstance(summarizer.prompts, Prompts) and summarizer.prompts.single == DEFAULT_PROMPTS.single
    llm = FakeLLM(outputs=["a", "b", "c", "d", "m"])
    summarizer.summarize(CHUNKS, llm, focus="dates")
    assert llm.calls[0][0] == {"role": "system", "content": "be brief"}
    assert content(llm.calls[0]) == ("CHUNK<user: fact number 0: item0 is blue\n"
                                     "user: fact number 1: item1 is blue\n>")
    assert content(llm.calls[-1]) == "MERGE<Part 1: a\n\nPart 2: b\n\nPart 3: c\n\nPart 4: d>!dates!"
    assert SUMMARIZERS.build(SUMMARIZERS.spec(summarizer)) == summarizer


def test_default_prompts_are_one_user_message():
    messages = DEFAULT_PROMPTS.messages("single", transcript="hi {not a field}")
    assert len(messages) == 1 and messages[0]["role"] == "user"
    assert messages[0]["content"].startswith("hi {not a field}\nSummarize")


@pytest.mark.parametrize("spec, problem", [
    ({"name": "map_reduce", "prompts": {"merge": "no partials here"}}, r"\{partials\}"),
    ({"name": "map_reduce", "prompts": {"chunk": "{transcript} {speaker}"}}, "unknown field {speaker}"),
    ({"name": "map_reduce", "prompts": {"chunk": "{transcript"}}, "literal braces"),
    ({"name": "map_reduce", "prompts": {"mapper": "{transcript}"}}, "unknown template 'mapper'"),
    ({"name": "map_reduce", "max_concurrency": 0}, "max_concurrency"),
    ({"name": "map_reduce", "chunk_timeout_s": -1}, "chunk_timeout_s"),
    ({"name": "refine", "temperature": "hot"}, "temperature"),
    ({"name": "single_pass", "max_tokens": 0}, "max_tokens"),
    ({"name": "single_pass", "max_token": 10}, "max_token"),
])
def test_bad_specs_raise_config_errors(spec, problem):
    with pytest.raises(ConfigError, match=problem):
        SUMMARIZERS.build(spec)


def test_progress_bar_and_log_consume_a_whole_run(caplog):
    import logging

    from lyra_lab.summarize import ProgressBar, log_events

    bar = ProgressBar(disable=True)
    seen = []

    def both(event):
        bar(event)
        seen.append(event.stage)
        log_events()(event)

    with caplog.at_level(logging.INFO, logger="lyra_lab.summarize"):
        MapReduceSummarizer().summarize(CHUNKS, FakeLLM(), on_event=both)
    assert seen[-1] == "complete" and bar._bar is None  # closed at the end
    assert "summarize chunk_done 1/4 ok" in caplog.text and "summarize complete" in caplog.text
