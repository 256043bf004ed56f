"""The cells of the memory systems of a grid (``[grid] systems``), planned beside the pipelines' cells."""

from __future__ import annotations

from lyra_lab.corpus import Corpus
from lyra_lab.experiments._cells import Cell, cell_id
from lyra_lab.experiments._spec import ExperimentSpec, vars_of
from lyra_lab.experiments._system_pipeline import system_labels


def system_cells(spec: ExperimentSpec, corpus: Corpus, corpus_sha256: str) -> list[Cell]:
    """The cells of ``spec.systems``: system × backend × embedder × seed × conversation.

    Each cell id is the hash of what its rows depend on (the run's context budgets too).
    """
    labels = system_labels(spec.systems)
    cells = []
    for pipeline in spec.systems:
        for backend in spec.backends:
            for embedder in spec.embedders:
                for seed in spec.seeds:
                    for conv in corpus.conversations:
                        payload = {
                            "corpus_sha256": corpus_sha256, "conversation_id": conv.id,
                            "sessions": [s.id for s in conv.sessions],
                            "probes": [p.id for p in corpus.probes_for(conv.id)],
                            "system": pipeline.to_dict(), "backend": backend, "embedder": embedder, "seed": seed,
                            "ks": list(spec.ks), "context_budgets": list(spec.context_budgets),
                            "score_adversarial_retrieval": spec.score_adversarial_retrieval, "qa": vars_of(spec.qa),
                        }
                        cells.append(Cell(cell_id(payload, conv.id), pipeline, labels[pipeline], backend, embedder,
                                          seed, conv.id))
    return cells
