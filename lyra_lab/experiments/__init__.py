"""Experiments: a TOML grid of strategies run into a resumable run folder of tidy results."""

from lyra_lab.experiments._cells import Cell
from lyra_lab.experiments._labels import distinct_labels, pipeline_labels
from lyra_lab.experiments._results import load_results
from lyra_lab.experiments._runfolder import RunFolder, environment, file_sha256
from lyra_lab.experiments._runner import plan_cells, run_experiment
from lyra_lab.experiments._select import Selection, load_corpus, select
from lyra_lab.experiments._spec import CorpusSpec, ExperimentSpec, JudgeSpec, QASpec

__all__ = [
    "Cell",
    "CorpusSpec",
    "ExperimentSpec",
    "JudgeSpec",
    "QASpec",
    "RunFolder",
    "Selection",
    "distinct_labels",
    "environment",
    "file_sha256",
    "load_corpus",
    "load_results",
    "pipeline_labels",
    "plan_cells",
    "run_experiment",
    "select",
]
