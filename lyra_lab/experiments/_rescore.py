"""Re-scoring an exported run: a run whose cache is the export, in a new folder, paying only for what is new.

``rescore(file, run_dir)`` reads an export (``lyra_lab.runs.read_export``: checksums checked), writes
its experiment file and corpus under ``run_dir/inputs/``, restores its response cache into
``run_dir/cache/`` and runs the experiment there through ``run_experiment`` (the road every run takes:
consent before any text leaves) with ``cache = "run"``.  What the file holds is not asked again:

* lyra-lab's own pipelines are rebuilt, every LLM call the original run made answered from the file,
  so an unchanged rescore calls no LLM and their rows must equal the exported ones
  (``RescoreResult.differences``; a timing or where an answer came from is left out of the comparison);
* the rows a memory system made (``[grid] systems``) come from the file as they are: nothing is sent to
  the system, which may be stopped; so do the rows of cells that were degraded (a fallback taken, a call
  lost) or failed for good, which a rebuild could not make again without paying for what the run lost;
* what the file lacks (cells with no rows: they failed or the run stopped) is run, and counted first.

``Changes`` re-scores differently: another QA scorer, other ``score_at_tokens`` budgets (neither
calls an LLM), or judges added — their calls are new.  A change re-scores the pipelines lyra-lab rebuilds;
memory systems' cells are left out (they would be asked again), and degraded or failed cells run again.
``rescore_plan`` counts the new calls before anything runs: one call per distinct question × answer the
run's log holds (the judge's prompt is a function of them; the same pair asked again is a cache hit) per
judge the original run did not have (judges are told apart by ``JudgeConfig.label``), and up to the dry
run's count (``plan``) for every cell that runs without its rows in the file.
"""

from __future__ import annotations

import json
import os
import tempfile
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from lyra_lab._registry import ConfigError
from lyra_lab.experiments.cells import Cell, alias_sources, grid_cells
from lyra_lab.experiments.forecast import conversation_controls
from lyra_lab.experiments.grid import ExperimentSpec, Injected, SystemPipeline, load_corpus, select
from lyra_lab.experiments._runner import RunOptions, run_experiment
from lyra_lab.runs import (Exported, RunFolder, copy_inputs, file_sha256, load_results, read_export, read_log, restore,
                           rows_folder)

_NOT_COMPARED = ("attempt",)  # which attempt of which folder wrote a row: never the same


@dataclass(frozen=True)
class Changes:
    """How a rescore differs from the exported run (all empty: the same run, rebuilt).

    Attributes:
        scorer: the QA scorer (``[qa] scorer``), e.g. ``"locomo"``.
        judges: judges to add, each as in ``[qa] judges`` (``{"prompt": ..., "backend": ...}``).
        score_at_tokens: the equal-budget scoring budgets (``[run] score_at_tokens``).
    """

    scorer: str | None = None
    judges: tuple[Mapping[str, Any], ...] = ()
    score_at_tokens: tuple[int, ...] | None = None

    @property
    def empty(self) -> bool:
        return self.scorer is None and not self.judges and self.score_at_tokens is None


@dataclass(frozen=True)
class RescorePlan:
    """What a rescore will do before it runs: the spec, what the file holds, the calls that are new.

    Attributes:
        from_file: the cells whose rows are taken from the file as they are (memory systems', degraded, failed).
        systems_kept: of those, memory systems' cells (nothing is sent to the systems).
        systems_left_out: with a change, memory systems' cells not in the rescore (they would be asked again).
        lacking_cells, lacking_calls: cells that run without their rows in the file (none in it, or degraded or
            failed cells under a change), and the most LLM calls they make (the response cache answers those it holds).
    """

    spec: ExperimentSpec
    responses_held: int
    answers: int
    distinct_answers: int
    new_judges: tuple[str, ...]
    new_calls: int
    cache_mode: str = "run"
    control_calls: int = 0
    from_file: frozenset[str] = frozenset()
    systems_kept: int = 0
    systems_left_out: int = 0
    lacking_cells: int = 0
    lacking_calls: int = 0

    @property
    def total_calls(self) -> int:
        """Every LLM call the rescore may pay: the new judges', their controls', and those the file lacks."""
        return self.new_calls + self.control_calls + self.lacking_calls

    def lines(self) -> list[str]:
        """The plan in a few lines (what ``lyra-lab rescore`` prints first)."""
        out = [f"rescore of {self.spec.name}: {self.responses_held} cached LLM responses in the file "
               f"(answered from it, no call)"]
        if self.cache_mode != "run":
            out.append(f"warning: the run kept its responses in the {self.cache_mode!r} cache, not in its folder, "
                       "so the file holds none: every LLM call the run made is made again")
        if self.from_file:
            out.append(f"from the file as they are: the rows of {len(self.from_file)} cells"
                       + (f" ({self.systems_kept} of memory systems: nothing sent to them)" if self.systems_kept
                          else ""))
            out.append("  (memory systems', degraded and failed cells: kept as the run left them)")
        if self.systems_left_out:
            out.append(f"left out: {self.systems_left_out} cells of memory systems (a change re-scores "
                       "lyra-lab's pipelines; no system is asked again)")
        if self.lacking_cells:
            out.append(f"new: up to {self.lacking_calls} LLM calls for {self.lacking_cells} cells the file has no "
                       "rows for (its cache answers those it holds)")
        if self.new_judges:
            out.append(f"new: {self.new_calls} judge calls ({self.answers} answers to grade, "
                       f"{self.distinct_answers} distinct question × answer pairs × {len(self.new_judges)} "
                       f"new judge{'s' * (len(self.new_judges) != 1)}: {', '.join(self.new_judges)}; "
                       "a pair asked again is answered by the response cache)")
            if self.control_calls:
                out.append(f"new: {self.control_calls} judge control calls (answers of known truth that measure "
                           "the new judges' error rates; `controls = false` on a judge leaves them out)")
        elif not self.lacking_calls:
            out.append("new: 0 LLM calls")
        return out


@dataclass(frozen=True)
class RescoreResult:
    """A rescore's rows, the LLM calls it paid per phase, and how its rows differ from the export's."""

    rows: pd.DataFrame
    paid_calls: Mapping[str, int]
    differences: tuple[str, ...] = field(default=())
    compared: bool = False

    @property
    def total_paid(self) -> int:
        return sum(self.paid_calls.values())


def _experiment(exported: Exported, inputs: Path, changes: Changes) -> ExperimentSpec:
    name = "experiment.toml" if "experiment.toml" in exported.members else "experiment.json"
    if name not in exported.members:
        raise ConfigError(f"{exported.path}: holds no experiment file (experiment.toml or experiment.json)")
    text = exported.text(name)
    data: dict[str, Any] = tomllib.loads(text) if name.endswith(".toml") else json.loads(text)
    corpus = dict(data.get("corpus", {}))
    for key, path in copy_inputs(exported, inputs).items():
        corpus[key] = str(path.resolve())
    data["corpus"] = corpus
    run = dict(data.get("run", {}))
    run["cache"] = "run"  # the restored response cache lives in the new run folder
    if changes.score_at_tokens is not None:
        run["score_at_tokens"] = list(changes.score_at_tokens)
    data["run"] = run
    qa = dict(data.get("qa", {}))
    if changes.scorer is not None:
        qa["scorer"] = changes.scorer
    if changes.judges:
        if not qa.get("enabled"):
            raise ConfigError(f"{exported.path}: the run answered no questions ([qa] enabled is false): "
                              "there is nothing for a judge to grade")
        qa["judges"] = list(qa.get("judges", [])) + [dict(j) for j in changes.judges]
    data["qa"] = qa
    inputs.mkdir(parents=True, exist_ok=True)
    (inputs / name).write_text(text, encoding="utf-8")
    (inputs / "changes.json").write_text(json.dumps({"scorer": changes.scorer, "judges": list(changes.judges),
                                                     "score_at_tokens": changes.score_at_tokens}, default=dict,
                                                    indent=2), encoding="utf-8")
    spec = ExperimentSpec.from_dict(data, base_dir=inputs, default_name=str(exported.manifest.get("run") or "rescore"))
    return replace(spec, source=(inputs / name).resolve())


def _cell_key(cell: Cell) -> tuple[str, str, str, str, int]:
    """What a cell is in a grid, whatever its id (a change of scoring changes every id)."""
    return cell.label, cell.conversation_id, cell.backend_label, cell.embedder_label, cell.seed


def rescore_plan(path: str | os.PathLike[str], run_dir: str | os.PathLike[str],
                 changes: Changes = Changes(), injected: Injected | None = None) -> RescorePlan:
    """Prepare ``run_dir`` from export ``path`` (inputs, restored cache) and count what is new; runs nothing.

    Raises:
        ConfigError: an unreadable export, one with no finished cell, or ``run_dir`` already holding a run.
    """
    exported = read_export(path)
    run_dir = Path(run_dir)
    if (run_dir / "spec.json").exists():
        raise ConfigError(f"{run_dir} already holds a run: rescore into a new folder")
    base = _experiment(exported, run_dir / "inputs", Changes())
    spec = base if changes.empty else _experiment(exported, run_dir / "inputs", changes)
    restore(exported, run_dir)
    with tempfile.TemporaryDirectory() as tmp:
        held = RunFolder(rows_folder(exported.path, tmp))
        finished, degraded, failed = held.finished(), held.degraded(), held.failed()
        old = load_results(held.path, write=False) if finished else pd.DataFrame()
    corpus = load_corpus(base.corpus)
    selection, sha = select(corpus, base.corpus), corpus.sha256 or file_sha256(base.corpus.path)
    cells = grid_cells(base, selection.corpus, sha)
    if not finished:
        raise ConfigError(f"{exported.path}: none of the run's {len(cells)} cells finished (no rows in the file): "
                          "nothing to rescore; run the experiment again")
    systems = {c.cell_id for c in cells if isinstance(c.pipeline, SystemPipeline)}
    aliases = alias_sources(base.aliases, cells)  # never run: their source's rows are copied
    if changes.empty:  # the rows a rebuild cannot make without asking a system or paying what the run lost
        kept = (systems | set(degraded) | set(failed)) & finished
        counted = [c for c in cells if c.cell_id not in finished and c.cell_id not in aliases]
    else:  # a change re-scores what lyra-lab rebuilds: systems are left out, degraded and failed cells run
        kept, spec = set(), replace(spec, systems=())
        again = {_cell_key(c) for c in cells if c.cell_id not in systems and c.cell_id not in aliases
                 and (c.cell_id not in finished or c.cell_id in degraded or c.cell_id in failed)}
        counted = [c for c in grid_cells(spec, selection.corpus, sha) if _cell_key(c) in again]
    before = {j.label for j in base.qa.judges}  # the one label home: JudgeConfig.label
    new = tuple(j.label for j in spec.qa.judges if j.label not in before)
    rebuilt = {c.cell_id for c in cells} - systems  # the cells whose answers a new judge grades
    answered = _answered(exported, rebuilt)
    answers = int(((old["metric"] == "qa_f1") & (old["probe_id"].astype(str) != "")
                   & old["cell_id"].isin(rebuilt)).sum()) if len(old) else 0
    return RescorePlan(spec, int(exported.manifest.get("responses", 0)), answers, len(answered), new,
                       len(answered) * len(new), str(exported.manifest.get("cache_mode", "run")),
                       _control_calls(spec, new), frozenset(kept), len(systems & kept),
                       0 if changes.empty else len(systems), len(counted), _calls_of(spec, counted, injected, run_dir))


def _calls_of(spec: ExperimentSpec, cells: list[Cell], injected: Injected | None, run_dir: Path) -> int:
    """The LLM calls ``cells`` make that the restored response cache does not answer (the plan's dry run).

    Exact for in-process models; a backend the dry run stands in for gets the stand-in's prompts, which the
    file's cache does not hold, so its count is the most the cells can pay.
    """
    if not cells:
        return 0
    from lyra_lab.experiments.forecast import Resume, plan

    ids = {c.cell_id for c in cells}
    forecast = plan(spec, Resume(run_dir, from_cache=True), injected, measure=False)
    return int(sum(c.calls.high for c in forecast.per_cell if c.cell_id in ids))


def _control_calls(spec: ExperimentSpec, new: tuple[str, ...]) -> int:
    """The new judges' control calls: distinct (probe, control answer) pairs each (a repeat is a cache hit)."""
    judges = [j for j in spec.qa.judges if j.label in new and j.controls] if spec.qa.enabled else []
    if not judges:
        return 0
    corpus = select(load_corpus(spec.corpus), spec.corpus).corpus
    pairs = {pair for conv in corpus.conversations for pair in conversation_controls(spec, corpus, conv.id)}
    return len(pairs) * len(judges)


def _answered(exported: Exported, cells: set[str]) -> set[tuple[str, str]]:
    """The distinct (probe, answer text) pairs the run's log holds for ``cells``: a judge's prompt is a function of them."""
    pairs = set()
    for line in exported.text("run/log.jsonl").splitlines() if "run/log.jsonl" in exported.members else []:
        event = json.loads(line)
        if event.get("event") != "answer" or event.get("failed") or event.get("text") is None:
            continue
        if event.get("cell_id") is None or event["cell_id"] in cells:  # a log from before cells named theirs
            pairs.add((str(event.get("probe_id")), str(event["text"])))
    return pairs


def rescore(path: str | os.PathLike[str], run_dir: str | os.PathLike[str], changes: Changes = Changes(),
            options: RunOptions | None = None, injected: Injected | None = None) -> RescoreResult:
    """Rebuild export ``path`` in the new folder ``run_dir`` (see the module docstring).

    ``options`` as for ``run_experiment`` (its ``yes`` or ``ask``: consent to send text where the cells that
    run send it; default: no progress bars, and a run that would send text off this machine stops).
    """
    plan = rescore_plan(path, run_dir, changes, injected)
    run_dir = Path(run_dir)
    with tempfile.TemporaryDirectory() as tmp:
        held = RunFolder(rows_folder(path, tmp))
        old = load_results(held.path, write=False)
        target = RunFolder(run_dir)
        target.prepare()  # a run folder of this lyra-lab, before any row lands in it
        for cell_id in sorted(plan.from_file):  # the rows the file holds and a rebuild would not make again
            target.write_rows(cell_id, held.read_rows(cell_id))
    # the file's degraded and failed cells are kept as the run left them (a resume would run them again)
    options = replace(options or RunOptions(progress=False), keep_degraded=True, retry_failed=False)
    rows = run_experiment(plan.spec, run_dir, options, injected)
    paid: dict[str, int] = {}
    for event in read_log(run_dir / "log.jsonl"):
        if event.get("event") == "llm_call" and not event.get("cached"):
            paid[str(event.get("phase"))] = paid.get(str(event.get("phase")), 0) + 1
    if not changes.empty:
        return RescoreResult(rows, paid)
    held = rows[rows["cell_id"].isin(set(old["cell_id"]))]  # the cells the file held; the rest are new
    # a column no compared row has (the cells the file lacked brought it) is not there
    differences = row_differences(old.dropna(axis=1, how="all"), held.dropna(axis=1, how="all"))
    return RescoreResult(rows, paid, tuple(differences), compared=True)


def row_differences(old: pd.DataFrame, new: pd.DataFrame, limit: int = 5) -> list[str]:
    """Where ``new`` differs from ``old`` (the first ``limit``): results only, by each measure's declared kind.

    Time measured on the machine and bookkeeping (where an answer came from: paid then, cached now) are left
    out (``lyra_lab.measures.is_result``).
    """
    from lyra_lab.measures import is_result

    def keyed(df: pd.DataFrame) -> pd.DataFrame:
        df = df[df["metric"].astype(str).map(is_result)].drop(columns=[c for c in _NOT_COMPARED if c in df.columns])
        key = ["cell_id", "pipeline", "conversation_id", "probe_id", "metric"]
        extra = [c for c in ("judge",) if c in df.columns]
        df = df.astype(object).where(df.notna(), "<missing>").map(_same_number).astype(str)  # NaN == NaN here
        return df.set_index(key + extra).sort_index()

    a, b = keyed(old), keyed(new)
    out = []
    if set(a.columns) != set(b.columns):
        out.append(f"columns differ: only in the export {sorted(set(a.columns) - set(b.columns))}, "
                   f"only in the rescore {sorted(set(b.columns) - set(a.columns))}")
    missing, added = a.index.difference(b.index), b.index.difference(a.index)
    if len(missing) or len(added):
        out.append(f"{len(missing)} rows of the export missing, {len(added)} rows new")
    both = a.index.intersection(b.index)
    cols = sorted(set(a.columns) & set(b.columns))
    left, right = a.loc[both, cols], b.loc[both, cols]
    unequal = (left != right).any(axis=1)
    for key in list(left.index[unequal])[:limit]:
        diff = [c for c in cols if left.loc[key, c] != right.loc[key, c]]
        out.append(f"row {key}: {', '.join(f'{c} {left.loc[key, c]} → {right.loc[key, c]}' for c in diff[:3])}")
    return out


def _same_number(value: object) -> object:
    """1.0 as 1: a column's dtype turns float when another cell's rows lack it, its values do not change."""
    return int(value) if isinstance(value, float) and value.is_integer() else value
