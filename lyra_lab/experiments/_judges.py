"""``[qa] judges``: several judges (prompt × model) grade every answer, so the judge is a variable of the run.

Each entry is a table ``{ prompt = "longmemeval_v1", backend = "openai/gpt-4o-mini" }`` (optionally
``max_tokens`` and a ``name``); the ``[judge]`` table, when enabled, is one more judge, listed first.
Rows of metric ``judge`` name their judge in the ``judge`` column; ``lyra_lab.reports.judge_agreement``
compares them.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from lyra_lab._registry import ConfigError
from lyra_lab.measures import JudgeConfig


def judges_of(spec: Any) -> tuple[JudgeConfig, ...]:
    """Every judge of an ``ExperimentSpec``: the ``[judge]`` table's when enabled, then ``[qa] judges``."""
    return all_judges(spec.qa, spec.judge)


def all_judges(qa: Any, judge: Any) -> tuple[JudgeConfig, ...]:
    first = (JudgeConfig(judge.prompt, judge.backend, judge.max_tokens),) if judge.enabled else ()
    return first + tuple(qa.judges)


def parse_judges(table: Mapping[str, Any]) -> dict[str, Any]:
    """The ``[qa]`` table with its ``judges`` list of tables built into ``JudgeConfig`` objects."""
    table = dict(table)
    if "judges" not in table:
        return table
    judges = table["judges"]
    if not isinstance(judges, list) or not all(isinstance(j, Mapping) for j in judges):
        raise ConfigError("[qa] judges must be a list of tables { prompt = ..., backend = ... }")
    allowed = [f.name for f in dataclasses.fields(JudgeConfig)]
    built = []
    for i, j in enumerate(judges):
        unknown = sorted(set(j) - set(allowed))
        if unknown:
            raise ConfigError(f"[qa] judges[{i}]: unknown key {unknown[0]!r}; allowed: {', '.join(allowed)}")
        try:
            built.append(JudgeConfig(**j))
        except ConfigError as exc:
            raise ConfigError(f"[qa] judges[{i}]: {exc}") from None
    table["judges"] = tuple(built)
    return table


def check_judges(qa: Any, judge: Any) -> None:
    """Judges need answers to grade, and distinct labels (they name the rows)."""
    if qa.judges and not qa.enabled:
        raise ConfigError("[qa] judges needs [qa] enabled: the judges grade the QA answers")
    labels = [j.label for j in all_judges(qa, judge)]
    twice = sorted({x for x in labels if labels.count(x) > 1})
    if twice:
        raise ConfigError(f"[qa] judges: the judge {twice[0]!r} is listed twice "
                          "(give one a 'name' to tell them apart)")
