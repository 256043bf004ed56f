"""``[qa] judges``: several judges (prompt × model) grade every answer, so the judge is a variable of the run.

Each entry is a table ``{ prompt = "longmemeval_v1", backend = "openai/gpt-4o-mini" }`` (optionally
``max_tokens`` and a ``name``).  Rows of metric ``judge`` name their judge in the ``judge`` column;
``lyra_lab.reports.judge_agreement`` compares them.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

from lyra_lab._registry import ConfigError
from lyra_lab.measures import JudgeConfig


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


def check_judges(judges: Sequence[JudgeConfig], answering: bool) -> None:
    """Judges need answers to grade (``answering``), and distinct labels (they name the rows)."""
    if judges and not answering:
        raise ConfigError("[qa] judges needs [qa] enabled: the judges grade the QA answers")
    labels = [j.label for j in judges]
    twice = sorted({x for x in labels if labels.count(x) > 1})
    if twice:
        raise ConfigError(f"[qa] judges: the judge {twice[0]!r} is listed twice "
                          "(give one a 'name' to tell them apart)")
