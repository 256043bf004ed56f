"""Degraded pipelines in a report: the mark on their labels, the section saying what degraded where, compare's warning.

A cell × recaller whose strategies fell back (an excerpt for a chunk summary, a
concatenation for a merge, a rollup left undone) or whose answering or judging
calls failed for good has ``degraded`` > 0 on its rows and a conversation-level
``degraded.<stage>.<kind>`` count per kind (see ``lyra_lab.experiments``).  Its
figures describe another memory than the pipeline meant to build, so the report
marks the pipeline wherever they appear (``DegradedRuns.label``: ``… ⚠ degraded (3)``
in tables and on figure labels), lists what degraded where (``markdown``, with
the run log's ``degraded`` events), and ``compare`` says so in one line.  The run
log's ``call_attempts`` events say how many attempts the run's calls needed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

import pandas as pd

from lyra_lab.backends import AttemptTally
from lyra_lab.runs import read_log

MARK = "⚠ degraded"
MAX_PLACES = 8  # "where" lines listed per pipeline; the rest are counted


@dataclass(frozen=True)
class DegradedPipeline:
    """One pipeline's degradation in a run.

    Attributes:
        pipeline: its label (as in the rows' ``pipeline`` column).
        total: fallbacks and failed calls over its cells (the sum of ``degraded``).
        cells: its cells that degraded, and ``of`` its cells in all.
        kinds: ``degraded.<stage>.<kind>`` → count.
    """

    pipeline: str
    total: int
    cells: int
    of: int
    kinds: Mapping[str, int] = field(default_factory=dict)

    def label(self) -> str:
        """``<memory> ⚠ degraded (<total>)|<recaller>``: the mark on the memory part of the label.

        Figures split ``<memory>|<recaller>`` into a row and a panel, so the mark stays with the row.
        """
        memory, bar, recaller = self.pipeline.partition("|")
        return f"{memory} {MARK} ({self.total}){bar}{recaller}"


def degraded_pipelines(df: pd.DataFrame) -> dict[str, DegradedPipeline]:
    """Pipeline label → its ``DegradedPipeline``, for the pipelines with a degraded cell (none: an empty dict)."""
    if "degraded" not in df.columns or "cell_id" not in df.columns or df.empty:
        return {}
    per_cell = df.groupby(["pipeline", "cell_id"], dropna=False)["degraded"].max().fillna(0)
    kinds = df[df["metric"].astype(str).str.startswith(("degraded.", "failed."))]  # failed.*: a cell failed for good
    out = {}
    for pipeline, counts in per_cell.groupby(level="pipeline"):
        if counts.sum() <= 0:
            continue
        mine = kinds[kinds["pipeline"] == pipeline].groupby("metric")["value"].sum()
        out[str(pipeline)] = DegradedPipeline(str(pipeline), int(counts.sum()), int((counts > 0).sum()), len(counts),
                                              {str(m): int(v) for m, v in mine.items() if v})
    return out


def relabel(df: pd.DataFrame, degraded: Mapping[str, DegradedPipeline]) -> pd.DataFrame:
    """``df`` with each degraded pipeline's label marked (``DegradedPipeline.label``)."""
    if not degraded or "pipeline" not in df.columns:
        return df
    marks = {name: d.label() for name, d in degraded.items()}
    return df.assign(pipeline=df["pipeline"].map(lambda p: marks.get(str(p), p)))


def _kinds(kinds: Mapping[str, int]) -> str:
    return ", ".join(f"{n} {metric}" for metric, n in sorted(kinds.items()))


def warning(degraded: Mapping[str, DegradedPipeline], run: str = "") -> str | None:
    """One line naming the degraded pipelines of a run (None: none degraded)."""
    if not degraded:
        return None
    listed = "; ".join(f"{d.pipeline}: {d.cells} of {d.of} cell(s), {_kinds(d.kinds) or f'{d.total} fallback(s)'}"
                       for d in degraded.values())
    where = f"{run}: " if run else ""
    failed = any(k.startswith("failed.") for d in degraded.values() for k in d.kinds)
    hint = " (failed.*: a failure that would recur; lyra-lab run --retry-failed runs those cells again)" if failed else ""
    return (f"{MARK}: {where}{len(degraded)} pipeline(s) fell back or lost calls, so their figures describe "
            f"another memory than they meant to build — {listed}. Resume the run to re-run those cells{hint}.")


def compare_warning(runs: Mapping[str, Mapping[str, DegradedPipeline]]) -> str | None:
    """One line for ``compare``: which side (run name → its degraded pipelines) is degraded (None: neither)."""
    sides = {run: d for run, d in runs.items() if d}
    if not sides:
        return None
    listed = "; ".join(f"{run}: " + ", ".join(f"{p.pipeline} ({p.cells} of {p.of} cell(s), {p.total} fallback(s) "
                                              "or failed call(s))" for p in d.values())
                       for run, d in sides.items())
    return (f"{MARK}: {listed} — these figures describe another memory (or fewer answers) than the pipeline "
            "meant to build; resume the run to re-run its degraded cells before trusting the difference.")


def _events(run_dir: Path, kinds: Iterable[str]) -> list[dict]:
    path = run_dir / "log.jsonl"
    wanted = set(kinds)
    return [e for e in read_log(path) if e.get("event") in wanted] if path.exists() else []


def attempts_line(events: Iterable[dict]) -> str | None:
    """The run's ``AttemptTally`` as a sentence, from each cell's latest ``call_attempts`` event."""
    latest: dict[str, dict] = {}
    for e in events:
        if e.get("event") == "call_attempts":
            latest[str(e.get("cell_id"))] = e
    if not latest:
        return None
    total = AttemptTally()
    for e in latest.values():
        for metrics in (e.get("phases") or {}).values():
            total = total + _tally(metrics)
    return f"LLM calls of the {len(latest)} cell(s) run: {total}."


def _tally(metrics: Mapping[str, int]) -> AttemptTally:
    """The ``AttemptTally`` whose ``metrics()`` are ``metrics``."""
    answered: Counter[int] = Counter()
    failed: Counter[str] = Counter()
    for name, n in metrics.items():
        if name == "calls.cached":
            answered[0] += int(n)
        elif name.startswith("calls.attempts_"):
            answered[int(name.removeprefix("calls.attempts_"))] += int(n)
        elif name.startswith("calls.failed."):
            failed[name.removeprefix("calls.failed.")] += int(n)
    return AttemptTally(answered, failed)


def _latest_places(events: Iterable[dict]) -> dict[str, list[dict]]:
    """Cell id → the ``degraded`` events of its latest run (a resumed cell's earlier ones are dropped)."""
    places: dict[str, list[dict]] = {}
    for e in events:
        cell = str(e.get("cell_id"))
        if e.get("event") == "cell_started":
            places[cell] = []
        elif e.get("event") == "degraded":
            places.setdefault(cell, []).append(e)
    return places


def markdown(run_dir: Path, df: pd.DataFrame, degraded: Mapping[str, DegradedPipeline]) -> list[str]:
    """The ``## Degradation and retries`` section: the attempts tally and what fell back where.

    Per degraded pipeline, from the run log's ``degraded`` events of the cells whose rows are in ``df``.
    """
    events = _events(run_dir, ("call_attempts", "degraded", "cell_started"))
    lines = ["\n## Degradation and retries\n"]
    attempts = attempts_line(events)
    if attempts:
        lines.append(attempts + "\n")
    if not degraded:
        lines.append("No pipeline degraded: every fallback count is 0, every answer and verdict was returned.\n"
                     if attempts else "Not recorded: this run's cells were written before lyra-lab counted "
                     "fallbacks and attempts.\n")
        return lines
    lines.append(f"Pipelines marked {MARK} (n) took n fallbacks or lost n calls for good; their figures "
                 "describe another memory (or fewer answers) than they meant to. Resuming the run re-runs "
                 "those cells (the response cache serves the calls that succeeded); `--keep-degraded` keeps them.\n")
    flagged = df[df["degraded"] > 0]
    cells = flagged.groupby("cell_id")["pipeline"].agg(lambda s: set(map(str, s))).to_dict()
    places = _latest_places(events)
    for d in degraded.values():
        lines.append(f"- `{d.pipeline}`: {d.cells} of {d.of} cell(s) degraded: {_kinds(d.kinds)}")
        mine = [e for cell, found in places.items() if d.pipeline in cells.get(cell, ()) for e in found
                if not e.get("recaller") or d.pipeline.endswith(f"|{e['recaller']}")]
        for e in mine[:MAX_PLACES]:
            attempts_ = f" after {e['attempts']} attempt(s)" if e.get("attempts") else ""
            probe = f" probe {e['probe_id']}" if e.get("probe_id") else ""
            lines.append(f"  - {e.get('conversation_id') or e.get('cell_id')}{probe}: {e.get('metric')} at "
                         f"{e.get('where')} ({e.get('cause')}{attempts_}): {str(e.get('error', ''))[:120]}")
        if len(mine) > MAX_PLACES:
            lines.append(f"  - … and {len(mine) - MAX_PLACES} more (the run log's `degraded` events)")
    return [*lines, ""]
