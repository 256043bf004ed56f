"""Re-scoring an exported run: rebuild it in a new folder from the file alone, paying only for what is new.

``rescore(file, run_dir)`` reads an export (``lyra_lab.runs.read_export``: checksums checked), writes
its experiment file and corpus under ``run_dir/inputs/``, restores its response cache into
``run_dir/cache/`` and runs the experiment there through ``run_experiment`` with ``cache = "run"``:
every LLM call the original run made is answered from the file, so an unchanged rescore calls no
LLM and its rows equal the exported ones (``RescoreResult.differences`` lists any that do not;
time measured on this machine — ``*latency*``, ``*_s`` — and where an answer came from — ``*cached_calls``,
``*.paid_*``, paid then and cached now — are left out of the comparison).

``Changes`` re-scores differently: another QA scorer, other ``score_at_tokens`` budgets (neither
calls an LLM), or judges added — their calls are the only new ones. ``rescore_plan`` counts them
before anything runs: one call per distinct question × answer the run's log holds (the judge's prompt
is a function of them; the same pair asked again is a cache hit) per judge the original run did not
have.
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
from lyra_lab.experiments.forecast import conversation_controls
from lyra_lab.experiments.grid import ExperimentSpec, Injected, load_corpus, select
from lyra_lab.experiments._runner import RunOptions, run_experiment
from lyra_lab.runs import Exported, copy_inputs, load_results, read_export, read_log, restore, rows_folder

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
    """What a rescore will do before it runs: the spec, what the file holds, the calls that are new."""

    spec: ExperimentSpec
    responses_held: int
    answers: int
    distinct_answers: int
    new_judges: tuple[str, ...]
    new_calls: int
    cache_mode: str = "run"
    control_calls: int = 0

    def lines(self) -> list[str]:
        """The plan in a few lines (what ``lyra-lab rescore`` prints first)."""
        out = [f"rescore of {self.spec.name}: {self.responses_held} cached LLM responses in the file "
               f"(answered from it, no call)"]
        if self.cache_mode != "run":
            out.append(f"warning: the run kept its responses in the {self.cache_mode!r} cache, not in its folder, "
                       "so the file holds none: every LLM call the run made is made again")
        if self.new_judges:
            out.append(f"new: {self.new_calls} judge calls ({self.answers} answers to grade, "
                       f"{self.distinct_answers} distinct question × answer pairs × {len(self.new_judges)} "
                       f"new judge{'s' * (len(self.new_judges) != 1)}: {', '.join(self.new_judges)}; "
                       "a pair asked again is answered by the response cache)")
            if self.control_calls:
                out.append(f"new: {self.control_calls} judge control calls (answers of known truth that measure "
                           "the new judges' error rates; `controls = false` on a judge leaves them out)")
        else:
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
    data: dict[str, Any] = tomllib.loads(exported.text("experiment.toml"))
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
    (inputs / "experiment.toml").write_text(exported.text("experiment.toml"), encoding="utf-8")
    (inputs / "changes.json").write_text(json.dumps({"scorer": changes.scorer, "judges": list(changes.judges),
                                                     "score_at_tokens": changes.score_at_tokens}, default=dict,
                                                    indent=2), encoding="utf-8")
    spec = ExperimentSpec.from_dict(data, base_dir=inputs, default_name=str(exported.manifest.get("run") or "rescore"))
    return replace(spec, source=(inputs / "experiment.toml").resolve())


def rescore_plan(path: str | os.PathLike[str], run_dir: str | os.PathLike[str],
                 changes: Changes = Changes()) -> RescorePlan:
    """Prepare ``run_dir`` from export ``path`` (inputs, restored cache) and count what is new; runs nothing.

    Raises:
        ConfigError: an unreadable export, or ``run_dir`` already holding a run.
    """
    exported = read_export(path)
    run_dir = Path(run_dir)
    if (run_dir / "spec.json").exists():
        raise ConfigError(f"{run_dir} already holds a run: rescore into a new folder")
    spec = _experiment(exported, run_dir / "inputs", changes)
    restore(exported, run_dir)
    before = {str(j.get("name") or f"{j.get('prompt')}@{j.get('backend')}") for j in exported.spec["qa"]["judges"]}
    new = tuple(j.label for j in spec.qa.judges if j.label not in before)
    with tempfile.TemporaryDirectory() as tmp:
        old = load_results(rows_folder(exported.path, tmp), write=False)
    answers = int(((old["metric"] == "qa_f1") & (old["probe_id"].astype(str) != "")).sum()) if len(old) else 0
    distinct = len(_answered(exported))
    return RescorePlan(spec, int(exported.manifest.get("responses", 0)), answers, distinct, new, distinct * len(new),
                       str(exported.manifest.get("cache_mode", "run")), _control_calls(spec, new))


def _control_calls(spec: ExperimentSpec, new: tuple[str, ...]) -> int:
    """The new judges' control calls: distinct (probe, control answer) pairs each (a repeat is a cache hit)."""
    judges = [j for j in spec.qa.judges if j.label in new and j.controls] if spec.qa.enabled else []
    if not judges:
        return 0
    corpus = select(load_corpus(spec.corpus), spec.corpus).corpus
    pairs = {pair for conv in corpus.conversations for pair in conversation_controls(spec, corpus, conv.id)}
    return len(pairs) * len(judges)


def _answered(exported: Exported) -> set[tuple[str, str]]:
    """The distinct (probe, answer text) pairs the run's log holds: a judge's prompt is a function of them."""
    pairs = set()
    for line in exported.text("run/log.jsonl").splitlines() if "run/log.jsonl" in exported.members else []:
        event = json.loads(line)
        if event.get("event") == "answer" and not event.get("failed") and event.get("text") is not None:
            pairs.add((str(event.get("probe_id")), str(event["text"])))
    return pairs


def rescore(path: str | os.PathLike[str], run_dir: str | os.PathLike[str], changes: Changes = Changes(),
            options: RunOptions | None = None, injected: Injected | None = None) -> RescoreResult:
    """Rebuild export ``path`` in the new folder ``run_dir`` (see the module docstring)."""
    plan = rescore_plan(path, run_dir, changes)
    rows = run_experiment(plan.spec, run_dir, options or RunOptions(progress=False), injected)
    paid: dict[str, int] = {}
    for event in read_log(Path(run_dir) / "log.jsonl"):
        if event.get("event") == "llm_call" and not event.get("cached"):
            paid[str(event.get("phase"))] = paid.get(str(event.get("phase")), 0) + 1
    if not changes.empty:
        return RescoreResult(rows, paid)
    with tempfile.TemporaryDirectory() as tmp:
        old = load_results(rows_folder(path, tmp), write=False)
    return RescoreResult(rows, paid, tuple(row_differences(old, rows)), compared=True)


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
        df = df.astype(object).where(df.notna(), "<missing>").astype(str)  # NaN == NaN here
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
