"""The benchmarks' own tables: a run's QA and retrieval figures laid out as LoCoMo's and LongMemEval's code prints them.

``locomo_table`` follows the LoCoMo release (snap-research/locomo, ``task_eval/evaluation_stats.py``,
``analyze_aggr_acc``): one column per question category in the release's order 4, 1, 2, 3, 5, and an
overall column that counts every question, category 5 (adversarial) included — the release sums all
five categories' scores over all five categories' counts. Category 5 is scored as the release scores
it (``task_eval/evaluation.py``: 1 when the answer says "no information available" or "not
mentioned"), which is what the ``locomo`` scorer does; a run scored otherwise is named so in a note.
Because mem0's evaluation and the papers following it report categories 1-4 only, an ``overall 1-4``
column stands beside it. Categories are labelled by ``LOCOMO_LABELS`` (``locomo_paper`` by default).

``longmemeval_table`` follows LongMemEval (xiaowu0162/LongMemEval, ``src/evaluation/print_qa_metrics.py``
and ``print_retrieval_metrics.py``): accuracy (a judge's verdict) per question type, the task-averaged
accuracy (the mean of the six types' means: NaN when a type has no question, as there) and the overall
accuracy, abstention accuracy over the questions whose id holds ``_abs`` apart; session recall_any/recall_all
at 5 and 10 over the questions that are not abstentions.

Each cell is a mean with its n (the questions behind it).  Rows are the report's pipelines
(``row_pipeline_labels``: the pipeline with its backend and embedder where they vary, judges in rows of
their own), so two backends are never pooled into one figure; a pipeline that fell back or lost calls
carries its mark and count (``⚠ degraded (4)``) and a note says what it lost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from lyra_lab.reports._degraded import degraded_pipelines, relabel, warning
from lyra_lab.reports._labels import DEFAULT_LOCOMO_LABELS, LOCOMO_LABELS, category_label
from lyra_lab.stats import row_pipeline_labels

LOCOMO_ORDER = (4, 1, 2, 3, 5)  # the release's print order (analyze_aggr_acc's keys)
LONGMEMEVAL_TYPES = ("single-session-user", "single-session-preference", "single-session-assistant",
                     "multi-session", "temporal-reasoning", "knowledge-update")
SESSION_METRICS = ("session_recall_any@5", "session_recall_any@10", "session_recall_all@5", "session_recall_all@10")
BENCHMARK_TABLES = ("locomo", "longmemeval")


class TableError(ValueError):
    """A run whose rows cannot make the table asked for (the message says why)."""


@dataclass(frozen=True)
class BenchmarkTable:
    """A benchmark's table of one run: tidy cells (``pipeline``, ``measure``, ``column``, ``value``, ``n``) and notes."""

    name: str
    cells: pd.DataFrame
    columns: tuple[str, ...]
    notes: tuple[str, ...] = ()

    def wide(self) -> pd.DataFrame:
        """One row per pipeline × measure, one column per table column, each cell ``"0.412 (n=282)"``."""
        text = self.cells.assign(cell=[_cell(v, n) for v, n in zip(self.cells["value"], self.cells["n"])])
        wide = text.pivot(index=["pipeline", "measure"], columns="column", values="cell")
        return wide.reindex(columns=list(self.columns)).fillna("–")

    def markdown(self) -> str:
        """The table as markdown, then its notes."""
        wide = self.wide().reset_index()
        header = "| " + " | ".join(wide.columns) + " |"
        lines = [f"## {self.name} table", "", header, "|" + "---|" * len(wide.columns)]
        lines += ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |"
                  for row in wide.itertuples(index=False)]
        return "\n".join(lines + [""] + [f"- {note}" for note in self.notes])

    def text(self) -> str:
        """The table for a terminal: a block per pipeline, then the notes, wrapped.

        In a block the table's columns are the rows and its measures go across: a benchmark's seven
        columns side by side pass 100 columns.
        """
        from lyra_lab._terminal import fit

        out = [f"{self.name} table (each cell: mean over probes, and n)"]
        for pipeline, block in self.wide().groupby(level="pipeline", sort=False):
            rows = block.droplevel("pipeline").T  # the table's columns down, the measures across
            out += ["", str(pipeline)]
            out += ["  " + line for line in rows.rename_axis(None, axis=1).to_string(index_names=False).splitlines()]
        return "\n".join(out + [""] + [fit(f"- {note}") for note in self.notes])


def _cell(value: float, n: int) -> str:
    return f"{value:.3f} (n={n})" if n else "– (n=0)"


def _measures(df: pd.DataFrame, f1: bool) -> dict[str, pd.DataFrame]:
    """Measure name → its per-probe rows: ``F1 (<scorer>)`` for ``qa_f1`` (when ``f1``), one per judge."""
    out: dict[str, pd.DataFrame] = {}
    if f1:
        qa = df[df["metric"] == "qa_f1"]
        scorers = qa["qa.scorer"].dropna().astype(str).unique() if "qa.scorer" in qa.columns else []
        for scorer in sorted(scorers) or ["?"]:
            part = qa if scorer == "?" else qa[qa["qa.scorer"].astype(str) == scorer]
            if len(part):
                out[f"F1 ({scorer} scorer)"] = part
    judged = df[df["metric"] == "judge"]
    names = judged["judge"].fillna("judge").astype(str) if "judge" in judged.columns else pd.Series(
        "judge", index=judged.index)
    for name in sorted(names.unique()):
        out[f"judge accuracy ({name})"] = judged[names == name]
    return out


def _pipelines(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The per-probe rows labelled as the report labels its pipelines, degraded ones marked; the notes to add."""
    df = df.reset_index(drop=True)
    df = df.assign(pipeline=row_pipeline_labels(df))  # backend/embedder where they vary, as summary.md
    degraded = degraded_pipelines(df)
    note = warning(degraded)
    df = relabel(df, degraded)
    return df[df["probe_id"].astype(str) != ""].copy(), [note] if note else []


def _mean(rows: pd.DataFrame) -> tuple[float, int]:
    values = rows["value"].astype(float)
    return (float(values.mean()) if len(values) else float("nan")), int(len(values))


def locomo_table(df: pd.DataFrame, labels: str = DEFAULT_LOCOMO_LABELS) -> BenchmarkTable:
    """LoCoMo's table of a run's rows (see the module docstring); ``labels`` a ``LOCOMO_LABELS`` scheme."""
    probes, marks = _pipelines(df)
    numbers = pd.to_numeric(probes["category"], errors="coerce")
    if numbers.isna().any() or not set(numbers.astype(int)) <= set(LOCOMO_ORDER):
        odd = sorted(set(probes.loc[numbers.isna() | ~numbers.isin(LOCOMO_ORDER), "category"].astype(str)))[:3]
        raise TableError(f"not a LoCoMo run: categories {', '.join(odd) or '(none)'} are not LoCoMo's 1-5")
    probes["number"] = numbers.astype(int)
    present = [c for c in LOCOMO_ORDER if c in set(probes["number"])]
    names = {c: category_label(c, labels) for c in present}
    columns = tuple(names[c] for c in present) + ("overall", "overall 1-4")
    cells = []
    for pipeline, rows in probes.groupby("pipeline", sort=True):
        measures = _measures(rows, f1=True)
        if not measures:
            continue
        for measure, part in measures.items():
            for c in present:
                value, n = _mean(part[part["number"] == c])
                cells.append((pipeline, measure, names[c], value, n))
            cells.append((pipeline, measure, "overall", *_mean(part)))
            cells.append((pipeline, measure, "overall 1-4", *_mean(part[part["number"] != 5])))
    if not cells:
        raise TableError("the run has no qa_f1 or judge rows: LoCoMo's table needs QA ([qa] enabled = true)")
    notes = [f"categories named as {_scheme_source(labels)}; the integer is LoCoMo's `category` field",
             "overall counts every question, category 5 (adversarial) included, as the LoCoMo release's "
             "analyze_aggr_acc does; overall 1-4 leaves it out, as mem0's evaluation does"]
    scorers = set(probes.loc[probes["metric"] == "qa_f1", "qa.scorer"].dropna().astype(str)) \
        if "qa.scorer" in probes.columns else set()
    if scorers - {"locomo"}:
        notes.append(f"F1 under the {', '.join(sorted(scorers - {'locomo'}))} scorer: LoCoMo's own rules "
                     "(category 5 right when the answer says it is not mentioned) are the `locomo` scorer "
                     "([qa] scorer = \"locomo\", or `lyra-lab rescore --scorer locomo`)")
    notes += marks
    frame = pd.DataFrame(cells, columns=["pipeline", "measure", "column", "value", "n"])
    return BenchmarkTable("LoCoMo", frame, columns, tuple(notes))


def _scheme_source(labels: str) -> str:
    if labels == "locomo_paper":
        return "the LoCoMo release (snap-research/locomo) names them (`--category-labels locomo_paper`)"
    if labels == "mem0":
        return "mem0's evaluation names them (`--category-labels mem0`)"
    return f"the {labels!r} scheme" if labels in LOCOMO_LABELS else "given"


def longmemeval_table(df: pd.DataFrame) -> BenchmarkTable:
    """LongMemEval's table of a run's rows (see the module docstring)."""
    probes, marks = _pipelines(df)
    types = set(probes["category"].dropna().astype(str))
    if not types or not types <= set(LONGMEMEVAL_TYPES):
        odd = sorted(types - set(LONGMEMEVAL_TYPES))[:3]
        raise TableError(f"not a LongMemEval run: question types {', '.join(odd) or '(none)'} are not LongMemEval's")
    probes["type"] = probes["category"].astype(str)
    abstention = probes["probe_id"].astype(str).str.contains("_abs")  # print_qa_metrics: '_abs' in the id
    present = [t for t in LONGMEMEVAL_TYPES if t in types]
    columns = tuple(present) + ("task-averaged", "overall", "abstention")
    cells = []
    for pipeline, rows in probes.groupby("pipeline", sort=True):
        for measure, part in _measures(rows, f1=False).items():
            means = {t: _mean(part[part["type"] == t]) for t in LONGMEMEVAL_TYPES}
            cells += [(pipeline, measure, t, *means[t]) for t in present]
            # print_qa_metrics: the mean over all six types' means, NaN when a type has no question
            task = float("nan") if any(n == 0 for _, n in means.values()) else \
                float(np.mean([value for value, _ in means.values()]))
            cells.append((pipeline, measure, "task-averaged", task, int(len(part))))
            cells.append((pipeline, measure, "overall", *_mean(part)))
            cells.append((pipeline, measure, "abstention", *_mean(part[abstention.loc[part.index]])))
        answerable = rows[~abstention.loc[rows.index]]
        for metric in SESSION_METRICS:
            part = answerable[answerable["metric"] == metric]
            if len(part):
                cells.append((pipeline, metric, "overall", *_mean(part)))
                for t in present:
                    cells.append((pipeline, metric, t, *_mean(part[part["type"] == t])))
    if not cells:
        raise TableError("the run has no judge or session_recall rows: LongMemEval's table needs a judge "
                         "([qa] judges) or session-level retrieval measures")
    missing = [t for t in LONGMEMEVAL_TYPES if t not in present]
    notes = ["accuracy is a judge's verdict, as LongMemEval's print_qa_metrics counts autoeval_label; "
             "abstention = the questions whose id holds _abs (they also count in their type and overall)",
             "task-averaged = the mean of the six question types' accuracies, as print_qa_metrics computes it: "
             + (f"NaN here, as there, since no question is of type {', '.join(missing)}" if missing
                else "every type has questions"),
             "session recall (LongMemEval's turn-to-session rule) over the questions that are not abstentions, "
             "as print_retrieval_metrics does"] + marks
    frame = pd.DataFrame(cells, columns=["pipeline", "measure", "column", "value", "n"])
    return BenchmarkTable("LongMemEval", frame, columns, tuple(notes))


def benchmark_table(df: pd.DataFrame, name: str, labels: str | None = None) -> BenchmarkTable:
    """The table ``name`` (one of ``BENCHMARK_TABLES``) of a run's rows; ``labels`` names LoCoMo's categories."""
    if name == "locomo":
        return locomo_table(df, labels or DEFAULT_LOCOMO_LABELS)
    if name == "longmemeval":
        return longmemeval_table(df)
    raise TableError(f"unknown table {name!r}; known: {', '.join(BENCHMARK_TABLES)}")
