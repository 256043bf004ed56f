"""``[qa] prompts`` and ``[qa] repeats``: the answer prompt and the answer's draw as variables of a run.

``prompts = ["short_v1", "locomo", "mem0"]`` answers every QA'd probe under each named answer prompt
(``lyra_lab.measures.ANSWER_PROMPTS``) over the same context; ``prompt = "..."`` stays one prompt.
``repeats = N`` asks each answer N times, each a call of its own (repeat ``r`` sends its own seed, so the
response cache keeps them apart); repeats are draws, so they need ``temperature > 0``: at temperature 0
a deterministic backend gives one answer N times, and the file is refused with one line saying so.
Rows of a run with either key name their prompt (``answer_prompt``) and repeat (``repeat``).
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol

from lyra_lab._registry import ConfigError


class QAOptions(Protocol):
    """What these checks read of ``[qa]`` (``QASpec``)."""

    @property
    def prompt(self) -> str: ...

    @property
    def prompts(self) -> tuple[str, ...]: ...

    @property
    def repeats(self) -> int: ...

    @property
    def temperature(self) -> float: ...


def parse_qa_options(table: Mapping[str, Any]) -> dict[str, Any]:
    """The ``[qa]`` table with ``prompts`` as a tuple of names (a single string: a list of one)."""
    table = dict(table)
    if "prompts" in table:
        prompts = table["prompts"]
        prompts = [prompts] if isinstance(prompts, str) else prompts
        if not isinstance(prompts, list) or not prompts or not all(isinstance(p, str) for p in prompts):
            raise ConfigError('[qa] prompts must be a list of answer prompt names, e.g. ["short_v1", "locomo"]')
        table["prompts"] = tuple(prompts)
    return table


def check_qa_options(qa: QAOptions) -> None:
    """One clear line for prompts that are unknown, listed twice or contradict ``prompt``, and for bad repeats."""
    from lyra_lab.measures import ANSWER_PROMPTS

    for name in (qa.prompt, *qa.prompts):
        if name not in ANSWER_PROMPTS:
            raise ConfigError(f"[qa] unknown answer prompt {name!r}; known: {', '.join(sorted(ANSWER_PROMPTS))}")
    twice = sorted({p for p in qa.prompts if qa.prompts.count(p) > 1})
    if twice:
        raise ConfigError(f"[qa] prompts lists {twice[0]!r} twice")
    if qa.prompts and qa.prompt != "short_v1" and qa.prompt not in qa.prompts:
        raise ConfigError(f"[qa] prompt = {qa.prompt!r} is not in prompts: give prompts alone")
    if isinstance(qa.repeats, bool) or not isinstance(qa.repeats, int) or qa.repeats < 1:
        raise ConfigError(f"[qa] repeats must be a positive integer, got {qa.repeats!r}")
    t = qa.temperature
    if isinstance(t, bool) or not isinstance(t, (int, float)) or t < 0:
        raise ConfigError(f"[qa] temperature must be a number >= 0, got {t!r}")
    if qa.repeats > 1 and t == 0:
        raise ConfigError(f"[qa] repeats = {qa.repeats} at temperature 0 is one answer {qa.repeats} times: "
                          "set temperature > 0")
