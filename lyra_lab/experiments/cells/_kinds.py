"""The two kinds of cell: lyra-lab's own pipelines (``PIPELINE_CELLS``) and memory systems (``SYSTEM_CELLS``).

Each answers ``CellKind`` (``_cell``): what the cell needs and where its text can go
(``needs``), how it runs (``run``), the cell the plan's dry run may execute in its place
(``dry``), and the identifying columns of its conversation rows (``columns``, for a failed
cell's rows).  A pipeline cell runs in process, so its dry run is itself against stand-in
models.  A system cell's dry run is a ``DeclaredSystem`` (``_system_stand_in``): what the
system declares, in process; the system itself (a service, a process, mem0) is never run
by a plan.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from lyra_lab.backends import BackendSpec
from lyra_lab.corpus import Corpus
from lyra_lab.experiments.cells._run import cell_models, run_pipeline_cell
from lyra_lab.experiments.cells._cell import Cell, CellNeeds, base_columns
from lyra_lab.experiments.cells._setup import CellSetup
from lyra_lab.experiments.grid import Resources, SystemPipeline
from lyra_lab.experiments.cells._system_cell import SystemCellJob, run_system_cell, system_columns
from lyra_lab.experiments.cells._system_stand_in import DeclaredSystem
from lyra_lab.replay import EventLog, Pipeline
from lyra_lab.runs import CellRows


def answering_backends(setup: CellSetup, cell: Cell) -> tuple[BackendSpec, ...]:
    """The backends of the answering stage of ``cell``: the answering model and every judge's."""
    if setup.answering is None:
        return ()
    return (setup.answering.backend or cell.backend, *(j.backend for j in setup.judges))


@dataclass(frozen=True)
class PipelineCells:
    """Cells of lyra-lab's own memory pipelines (replayed in process)."""

    def needs(self, cell: Cell, setup: CellSetup) -> CellNeeds:
        """Its backend (if it summarizes or rolls up), the answering stage's and the judges', and its embedder.

        An LLM-free pipeline (chunks into memory as they are) needs no backend: nothing is started
        or sent there, and it need not be installed (its spec is still checked). ``none``: no embedder.
        """
        embedders = () if cell.embedder in (None, "none") else (cell.embedder,)
        own = (cell.backend,) if _memory_pipeline(cell).calls_backend else ()
        return CellNeeds(backends=(*own, *answering_backends(setup, cell)), embedders=embedders)

    def run(self, setup: CellSetup, cell: Cell, corpus: Corpus, res: Resources, log: EventLog) -> CellRows:
        """Replay the conversation, score, answer (``_run.run_pipeline_cell``)."""
        return run_pipeline_cell(setup, cell, corpus, res, log)

    def dry(self, cell: Cell, reply: Literal["low", "high"]) -> Cell:
        """The cell itself: everything it runs is in process (the dry run gives it stand-in models)."""
        return cell

    def columns(self, setup: CellSetup, cell: Cell) -> list[dict[str, object]]:
        """One set per recaller (``_cell.base_columns``)."""
        return [base_columns(setup.run, cell, label, recaller, setup.corpus) for label, recaller in setup.recallers]


@dataclass(frozen=True)
class SystemCells:
    """Cells of memory systems lyra-lab does not build (``[grid] systems``)."""

    def needs(self, cell: Cell, setup: CellSetup) -> CellNeeds:
        """What the system uses of the cell and declares (``MemorySystem.declare``), and the answering stage."""
        system = _pipeline(cell).system
        uses, declared = system.needs(), system.declare()
        backends = ((cell.backend,) if uses.backend else ()) + answering_backends(setup, cell) + declared.backends
        embedders = ((cell.embedder,) if uses.embedder and cell.embedder not in (None, "none") else ()) \
            + declared.embedders
        return CellNeeds(backends=backends, embedders=embedders, urls=declared.urls, processes=declared.processes)

    def run(self, setup: CellSetup, cell: Cell, corpus: Corpus, res: Resources, log: EventLog) -> CellRows:
        """Run the system over the conversation on the replay clock (``_system_cell.run_system_cell``)."""
        backend, answers, clog = cell_models(setup, cell, res, log)
        return run_system_cell(SystemCellJob(setup, cell, _pipeline(cell), corpus, clog, backend,
                                             res.embedder(cell.embedder), answers))

    def dry(self, cell: Cell, reply: Literal["low", "high"]) -> Cell:
        """The cell with its system replaced by what it declares (``DeclaredSystem``): nothing leaves the process.

        A system that declares it runs in this process (lyra-lab's own pipeline) is run as it is.
        """
        pipeline = _pipeline(cell)
        if pipeline.system.declare().in_process:
            return cell
        stand_in = dataclasses.replace(pipeline, system=DeclaredSystem.of(pipeline.system, reply))
        return dataclasses.replace(cell, pipeline=stand_in)

    def columns(self, setup: CellSetup, cell: Cell) -> list[dict[str, object]]:
        """One set (``_system_cell.system_columns``)."""
        return [system_columns(setup.run, cell, _pipeline(cell), setup.corpus)]


def _memory_pipeline(cell: Cell) -> Pipeline:
    if not isinstance(cell.pipeline, Pipeline):  # narrowing for the type checker: grid_cells pairs them
        raise TypeError(f"cell {cell.cell_id} is not a lyra-lab pipeline's")
    return cell.pipeline


def _pipeline(cell: Cell) -> SystemPipeline:
    if not isinstance(cell.pipeline, SystemPipeline):  # narrowing for the type checker: grid_cells pairs them
        raise TypeError(f"cell {cell.cell_id} is not a memory system's")
    return cell.pipeline




#: The kind of every cell of lyra-lab's pipelines.
PIPELINE_CELLS = PipelineCells()
#: The kind of every memory system's cell.
SYSTEM_CELLS = SystemCells()
