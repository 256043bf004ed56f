"""The grid: what an experiment file says, validated, and what its axes name.

Holds the spec (``ExperimentSpec``, ``CorpusSpec``, ``QASpec``: the TOML file, checked), the corpus
selection (``select``, ``load_corpus``), pipeline and system labels, the ``[qa] judges`` table, the
grid combinations checked at spec time (impossible ones, aliases), the memory systems named in
``[grid] systems`` (``SystemPipeline``), and the run's backends and embedders built on first use
(``Resources``, ``Injected``).

The floor of ``experiments``: it imports no other room (``cells``, ``executors``, ``forecast``) and
nothing of ``lyra_lab.experiments`` itself; every other room may import it (through this face).
"""

from lyra_lab.experiments.grid._labels import distinct_labels, pipeline_labels, spec_label
from lyra_lab.experiments.grid._resources import (Injected, Resources, SeededBackend, embedding_cache_path,
                                                  response_cache_dir, run_backend, run_embedder, spec_key)
from lyra_lab.experiments.grid._select import Selection, load_corpus, select
from lyra_lab.experiments.grid._spec import (CACHE_MODES, EXECUTORS, TABLES, CorpusSpec, ExperimentSpec, QASpec,
                                             corpus_spec, vars_of)
from lyra_lab.experiments.grid._system_pipeline import SystemPipeline, system_labels

__all__ = [
    "CACHE_MODES",
    "EXECUTORS",
    "TABLES",
    "CorpusSpec",
    "ExperimentSpec",
    "Injected",
    "QASpec",
    "Resources",
    "SeededBackend",
    "Selection",
    "SystemPipeline",
    "corpus_spec",
    "distinct_labels",
    "embedding_cache_path",
    "load_corpus",
    "pipeline_labels",
    "response_cache_dir",
    "run_backend",
    "run_embedder",
    "select",
    "spec_key",
    "spec_label",
    "system_labels",
    "vars_of",
]
