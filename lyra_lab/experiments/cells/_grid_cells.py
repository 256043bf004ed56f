"""A grid's cells and what they run with: ``grid_cells`` (every cell of a spec), ``cell_setup`` (their ``CellSetup``).

The grid's points (backend × embedder × seed × conversation, ``grid_points``) each hold a cell per
memory pipeline and, after them, per memory system (``[grid] systems``, ``system_cells``); each
cell id is a hash of what its rows depend on.  ``executor_of`` says how the cells run.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator, NamedTuple

from lyra_lab.backends import BackendSpec, EmbedderSpec, result_settings
from lyra_lab.corpus import Corpus
from lyra_lab.experiments.cells._cell import Cell, cell_id
from lyra_lab.experiments.cells._kinds import PIPELINE_CELLS, SYSTEM_CELLS
from lyra_lab.experiments.cells._setup import AnswerSetup, CellSetup, answer_room
from lyra_lab.experiments.grid import ExperimentSpec, pipeline_labels, system_labels, vars_of
from lyra_lab.measures import Scoring
from lyra_lab.replay import strategy_spec


class GridPoint(NamedTuple):
    """One point of the grid a pipeline or a system runs at, with the cell id's shared payload."""

    backend: BackendSpec
    embedder: EmbedderSpec
    seed: int
    conversation_id: str
    payload: dict[str, object]


def grid_points(spec: ExperimentSpec, corpus: Corpus, corpus_sha256: str) -> Iterator[GridPoint]:
    """Backend × embedder × seed × conversation (in that nesting), each with what every cell id hashes.

    A backend's transport settings (``lyra_lab.backends.TRANSPORT_FIELDS``: concurrency, timeouts, retries)
    change how fast its answers come, not what they are: the ids leave them out (``result_settings``).
    """
    qa = qa_identity(spec)
    for backend in spec.backends:
        for embedder in spec.embedders:
            for seed in spec.seeds:
                for conv in corpus.conversations:
                    payload = {
                        "corpus_sha256": corpus_sha256, "conversation_id": conv.id,
                        "sessions": [s.id for s in conv.sessions],
                        "probes": [p.id for p in corpus.probes_for(conv.id)],
                        "backend": result_settings(backend), "embedder": embedder, "seed": seed, "ks": list(spec.ks),
                        "qa": qa,
                    }
                    yield GridPoint(backend, embedder, seed, conv.id, payload)


def qa_identity(spec: ExperimentSpec) -> dict[str, object]:
    """``[qa]`` as cell ids hash it: its answering and judges' backends without their transport settings."""
    qa = vars_of(spec.qa)  # [qa] keys newer than cell ids only when set: ids of specs without them are unchanged
    if qa["backend"]:
        qa["backend"] = result_settings(qa["backend"])
    qa["judges"] = tuple(j if result_settings(j.backend) is j.backend else replace(j, backend=result_settings(j.backend))
                         for j in spec.qa.judges)
    return qa


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


def grid_cells(spec: ExperimentSpec, corpus: Corpus, corpus_sha256: str) -> list[Cell]:
    """Every cell: memory pipeline × backend × embedder × seed × conversation (in that nesting).

    Then the memory systems' cells (``[grid] systems``) in the same nesting.
    """
    labels = pipeline_labels(spec.pipelines)
    recallers = [{"label": label, **strategy_spec(r)} for label, r in spec.recallers]
    answering = answer_setup(spec)
    cells = []
    for pipeline in spec.pipelines:
        for point in grid_points(spec, corpus, corpus_sha256):
            payload = {**point.payload, "pipeline": pipeline.to_dict(), "recallers": recallers}
            room = answer_room(spec.recallers, answering, point.backend)
            if room is not None:  # full_context's context is sized by it (grids without one keep their ids)
                payload["answer_room"] = {"window": room.window, "safety": room.safety}
            if spec.score_adversarial_retrieval:  # only when set
                payload["score_adversarial_retrieval"] = True
            cells.append(Cell(cell_id(payload, point.conversation_id), pipeline, labels[pipeline], point.backend,
                              point.embedder, point.seed, point.conversation_id, PIPELINE_CELLS))
    return cells + system_cells(spec, corpus, corpus_sha256)


def answer_setup(spec: ExperimentSpec) -> AnswerSetup | None:
    """``[qa]`` as the cells answer: None when it is off."""
    qa = spec.qa
    return AnswerSetup(backend=qa.backend or None, prompt=qa.prompt, max_probes=qa.max_probes,
                       max_tokens=qa.max_tokens, scorer=qa.scorer, prompts=qa.prompts, repeats=qa.repeats,
                       temperature=float(qa.temperature)) if qa.enabled else None


def cell_setup(spec: ExperimentSpec, corpus: str, progress: bool = False) -> CellSetup:
    """The ``CellSetup`` of ``spec``: what every cell of its run is replayed, scored and answered with."""
    qa = spec.qa
    answering = answer_setup(spec)
    scoring = Scoring(ks=spec.ks, budgets=spec.context_budgets, adversarial_retrieval=spec.score_adversarial_retrieval)
    return CellSetup(run=spec.name, corpus=corpus, recallers=spec.recallers, scoring=scoring, answering=answering,
                    judges=qa.judges if qa.enabled else (), workers=spec.workers, cache=spec.cache,
                    progress=progress and executor_of(spec) == "serial")


def executor_of(spec: ExperimentSpec) -> str:
    """How the cells run: ``[run] executor``, else serial (``max_cells = 1``) or threads."""
    return spec.executor or ("serial" if spec.max_cells == 1 else "threads")


def check_capabilities(spec: ExperimentSpec) -> None:
    """Raise ``MissingExtra`` (one line naming the extra) for an executor or a system whose extra is missing.

    The local backend's extra is checked with the backends a cell needs (``check_backend_spec``).
    """
    from lyra_lab._extras import require

    wanted = [f"executor:{executor_of(spec)}"] + [c for p in spec.systems for c in p.system.declare().capabilities]
    for capability in dict.fromkeys(wanted):
        if capability.startswith("executor:") and capability != "executor:ray":
            continue  # serial, threads and processes are the standard library's
        require(capability)
