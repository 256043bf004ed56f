"""The cells: one replay of a memory pipeline (or one memory system's run) at one point of the grid, and how each runs.

Holds the cell model (``Cell``, the ``CellKind`` protocol every kind answers, ``CellNeeds``, the
cell id and the tidy rows' columns), the two kinds (``PIPELINE_CELLS``: lyra-lab's own pipelines;
``SYSTEM_CELLS``: memory systems), a grid's cells (``grid_cells``) and the ``CellSetup`` they run
with (``cell_setup``), how a cell runs (``run_cell``: replay, recall, scoring, the answer stage and
its judges, the ``probe_detail`` events), failures by kind (``CELL_FAILURES``, deterministic ones
as ``failed.<stage>.<reason>`` rows), and aliased pipelines' rows (``alias_rows``).

May import ``grid`` (through its face); never ``executors``, ``forecast`` nor ``lyra_lab.experiments``
itself.  ``executors``, ``forecast`` and the runner import it through this face.
"""

from lyra_lab.experiments.cells._aliases import alias_rows, alias_sources
from lyra_lab.experiments.cells._cell import Cell, CellKind, CellNeeds, cell_id
from lyra_lab.experiments.cells._failures import CELL_FAILURES
from lyra_lab.experiments.cells._grid_cells import (cell_setup, check_capabilities, executor_of, grid_cells, grid_points,
                                                   system_cells)
from lyra_lab.experiments.cells._kinds import PIPELINE_CELLS, SYSTEM_CELLS
from lyra_lab.experiments.cells._run import run_cell
from lyra_lab.experiments.cells._setup import AnswerSetup, CellSetup

__all__ = [
    "CELL_FAILURES",
    "PIPELINE_CELLS",
    "SYSTEM_CELLS",
    "AnswerSetup",
    "Cell",
    "CellKind",
    "CellNeeds",
    "CellSetup",
    "alias_rows",
    "alias_sources",
    "cell_id",
    "cell_setup",
    "check_capabilities",
    "executor_of",
    "grid_cells",
    "grid_points",
    "run_cell",
    "system_cells",
]
