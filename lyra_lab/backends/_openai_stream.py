"""Turning one OpenAI chat response (streamed or not) into the parts of a ``Completion``.

Shared by the thread and asyncio paths of ``OpenAIBackend``. A stream that
ends without a ``finish_reason`` was cut short, which is a retryable
``StreamError`` rather than a silently truncated answer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from lyra_lab.backends._retry import StreamError

# Parameters of the chat completions API; any other generation parameter
# (repeat_penalty, top_k, min_p…) is a server extension sent in ``extra_body``.
OPENAI_PARAMS = frozenset({
    "audio", "frequency_penalty", "logit_bias", "logprobs", "max_completion_tokens", "max_tokens",
    "metadata", "modalities", "n", "parallel_tool_calls", "prediction", "presence_penalty",
    "prompt_cache_key", "reasoning_effort", "response_format", "safety_identifier", "seed",
    "service_tier", "stop", "store", "temperature", "tool_choice", "tools", "top_logprobs", "top_p",
    "user", "verbosity", "web_search_options", "extra_headers", "extra_query",
})


def build_request(model: str, messages: Sequence[Mapping[str, Any]],
                  params: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of ``chat.completions.create`` (minus stream and timeout)."""
    if not messages:
        raise ValueError("complete() needs at least one message")
    if params.get("n", 1) != 1:
        raise ValueError("n != 1 is not supported: one call gives one completion")
    kwargs: dict[str, Any] = {"model": model, "messages": [dict(m) for m in messages]}
    extra: dict[str, Any] = {}
    for key, value in params.items():
        if key == "extra_body":
            extra.update(value or {})
        elif key in ("stream", "stream_options", "model", "messages"):
            raise ValueError(f"{key!r} is set by the backend, not by call params")
        elif key in OPENAI_PARAMS:
            kwargs[key] = value
        else:
            extra[key] = value
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


@dataclass
class Answer:
    """What one successful attempt produced, before costing."""

    text: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float
    ttft_s: float | None
    response_model: str | None
    fingerprint: str | None = None


class StreamAccumulator:
    """Collects streamed chunks: text, time to first token, finish reason, usage."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.parts: list[str] = []
        self.ttft_s: float | None = None
        self.finish_reason: str | None = None
        self.usage: Any = None
        self.model: str | None = None
        self.fingerprint: str | None = None

    def add(self, chunk: Any) -> None:
        if getattr(chunk, "usage", None) is not None:
            self.usage = chunk.usage
        self.model = getattr(chunk, "model", None) or self.model
        self.fingerprint = getattr(chunk, "system_fingerprint", None) or self.fingerprint
        for choice in getattr(chunk, "choices", None) or ():
            delta = getattr(choice, "delta", None)
            content = getattr(delta, "content", None) if delta is not None else None
            if content:
                if self.ttft_s is None:
                    self.ttft_s = time.perf_counter() - self.started
                self.parts.append(content)
            if getattr(choice, "finish_reason", None):
                self.finish_reason = choice.finish_reason

    def answer(self) -> Answer:
        if self.finish_reason is None:
            raise StreamError(
                f"stream cut short: ended without a finish_reason after {len(self.parts)} chunk(s)")
        prompt, completion = _usage_pair(self.usage)
        return Answer("".join(self.parts), self.finish_reason, prompt, completion,
                      time.perf_counter() - self.started, self.ttft_s, self.model, self.fingerprint)


def answer_from_response(response: Any, started: float) -> Answer:
    """An ``Answer`` from a non-streamed ``ChatCompletion``."""
    if isinstance(response, (str, bytes)) or not getattr(response, "choices", None):
        raise StreamError(f"malformed response: no choices in {str(response)[:200]!r}")
    choice = response.choices[0]
    text = getattr(choice.message, "content", None) or ""
    prompt, completion = _usage_pair(getattr(response, "usage", None))
    return Answer(text, choice.finish_reason, prompt, completion, time.perf_counter() - started, None,
                  getattr(response, "model", None), getattr(response, "system_fingerprint", None))


def _usage_pair(usage: Any) -> tuple[int | None, int | None]:
    if usage is None:
        return None, None
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None, None
    return prompt, completion
