"""Experiments: a TOML grid of strategies run into a resumable run folder of tidy results.

``ExperimentSpec`` (the experiment file, validated) → ``grid_cells`` (one ``Cell`` per pipeline ×
backend × embedder × seed × conversation) and ``cell_setup`` (the ``CellSetup`` every cell runs with)
→ an executor (serial, threads, worker processes, Ray) → rows written by ``run_experiment``.

``plan(spec)`` says beforehand what a run will embed, call, cost and take on this machine (a
``Forecast``; ``forecast_text`` renders it), from a dry run of the cells against stand-in models.
``rescore(file, run_dir)`` rebuilds an exported run (``lyra_lab.runs.export_run``) in a new folder,
its LLM answers from the file, paying only for what a change adds (``Changes``: judges).
"""

from lyra_lab._moved import moved_names
from lyra_lab.experiments.cells import (AnswerSetup, Cell, CellKind, CellNeeds, CellSetup, cell_setup, executor_of,
                                        grid_cells)
from lyra_lab.experiments._inspect import HitView, PipelineView, ProbeView, inspect_probe
from lyra_lab.experiments._probe_ids import ProbeListing, resolve_probe_id, run_probes
from lyra_lab.experiments.grid import (CACHE_MODES, EXECUTORS, TABLES, CorpusSpec, ExperimentSpec, Injected, QASpec,
                                       Selection, distinct_labels, load_corpus, pipeline_labels, select)
from lyra_lab.experiments._recall_eval import recall_eval_spec, recall_result, run_recall_eval
from lyra_lab.experiments._recall_result import ProbeRecall, RecallEvalResult, raw_turn_pipeline, skip_reason
from lyra_lab.experiments.executors import CellExecutor, CellJob, CellOutcome
from lyra_lab.experiments.forecast import (BackendForecast, CellForecast, Destination, EmbedderForecast, Forecast,
                                           Resume, Span, Work, decide, destinations, forecast_text, plan,
                                           remote_endpoints)
from lyra_lab.experiments._rescore import Changes, RescorePlan, RescoreResult, rescore, rescore_plan
from lyra_lab.experiments._road import Ask
from lyra_lab.experiments._runner import RunOptions
from lyra_lab.experiments._legacy_run import run_experiment

__all__ = [
    "CACHE_MODES",
    "EXECUTORS",
    "TABLES",
    "AnswerSetup",
    "Ask",
    "BackendForecast",
    "Cell",
    "CellExecutor",
    "CellForecast",
    "CellJob",
    "CellKind",
    "CellNeeds",
    "CellOutcome",
    "CellSetup",
    "Changes",
    "CorpusSpec",
    "Destination",
    "EmbedderForecast",
    "ExperimentSpec",
    "Forecast",
    "HitView",
    "Injected",
    "PipelineView",
    "ProbeListing",
    "ProbeRecall",
    "ProbeView",
    "QASpec",
    "RecallEvalResult",
    "RescorePlan",
    "RescoreResult",
    "Resume",
    "RunOptions",
    "Selection",
    "Span",
    "Work",
    "cell_setup",
    "decide",
    "destinations",
    "distinct_labels",
    "executor_of",
    "forecast_text",
    "grid_cells",
    "inspect_probe",
    "load_corpus",
    "pipeline_labels",
    "plan",
    "raw_turn_pipeline",
    "recall_eval_spec",
    "recall_result",
    "remote_endpoints",
    "rescore",
    "rescore_plan",
    "resolve_probe_id",
    "run_experiment",
    "run_probes",
    "run_recall_eval",
    "select",
    "skip_reason",
]

# names that moved away keep importing from here for one release, with a DeprecationWarning (lyra_lab._moved)
__getattr__ = moved_names(__name__)
