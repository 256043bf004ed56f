"""The grid's points (backend × embedder × seed × conversation) and the cells of its memory systems (``[grid] systems``)."""

from __future__ import annotations

from typing import Iterator, NamedTuple

from lyra_lab.backends import BackendSpec, EmbedderSpec
from lyra_lab.corpus import Corpus
from lyra_lab.experiments._cell_kinds import SYSTEM_CELLS
from lyra_lab.experiments._cells import Cell, cell_id
from lyra_lab.experiments._spec import ExperimentSpec, vars_of
from lyra_lab.experiments._system_pipeline import system_labels


class GridPoint(NamedTuple):
    """One point of the grid a pipeline or a system runs at, with the cell id's shared payload."""

    backend: BackendSpec
    embedder: EmbedderSpec
    seed: int
    conversation_id: str
    payload: dict[str, object]


def grid_points(spec: ExperimentSpec, corpus: Corpus, corpus_sha256: str) -> Iterator[GridPoint]:
    """Backend × embedder × seed × conversation (in that nesting), each with what every cell id hashes."""
    for backend in spec.backends:
        for embedder in spec.embedders:
            for seed in spec.seeds:
                for conv in corpus.conversations:
                    payload = {
                        "corpus_sha256": corpus_sha256, "conversation_id": conv.id,
                        "sessions": [s.id for s in conv.sessions],
                        "probes": [p.id for p in corpus.probes_for(conv.id)],
                        "backend": backend, "embedder": embedder, "seed": seed, "ks": list(spec.ks),
                        "qa": vars_of(spec.qa),
                    }
                    yield GridPoint(backend, embedder, seed, conv.id, payload)


def system_cells(spec: ExperimentSpec, corpus: Corpus, corpus_sha256: str) -> list[Cell]:
    """The cells of ``spec.systems``: system × backend × embedder × seed × conversation.

    Each cell id is the hash of what its rows depend on (the run's context budgets too).
    """
    labels = system_labels(spec.systems)
    return [Cell(cell_id({**point.payload, "system": pipeline.to_dict(),
                          "context_budgets": list(spec.context_budgets),
                          "score_adversarial_retrieval": spec.score_adversarial_retrieval}, point.conversation_id),
                 pipeline, labels[pipeline], point.backend, point.embedder, point.seed, point.conversation_id,
                 SYSTEM_CELLS)
            for pipeline in spec.systems for point in grid_points(spec, corpus, corpus_sha256)]
