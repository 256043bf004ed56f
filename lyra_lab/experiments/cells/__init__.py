"""The cells: one replay of a memory pipeline (or one memory system's run) at one point of the grid, and how each runs.

Holds the cell model (``Cell``, the ``CellKind`` protocol every kind answers, ``CellNeeds``, the
cell id and the tidy rows' columns), the two kinds (``PIPELINE_CELLS``: lyra-lab's own pipelines;
``SYSTEM_CELLS``: memory systems), a grid's cells (``plan_cells``) and the ``CellPlan`` they run
with (``cell_plan``), how a cell runs (``run_cell``: replay, recall, scoring, the answer stage and
its judges, the ``probe_detail`` events), failures by kind (``CELL_FAILURES``, deterministic ones
as ``failed.<stage>.<reason>`` rows), and aliased pipelines' rows (``alias_rows``).

May import ``grid`` (through its face); never ``executors``, ``forecast`` nor ``lyra_lab.experiments``
itself.  ``executors``, ``forecast`` and the runner import it through this face.
"""

from lyra_lab.experiments.cells._aliases import alias_rows, alias_sources
from lyra_lab.experiments.cells._cell import Cell, CellKind, CellNeeds, cell_id
from lyra_lab.experiments.cells._failures import CELL_FAILURES
from lyra_lab.experiments.cells._grid_cells import cell_plan, executor_of, grid_points, plan_cells, system_cells
from lyra_lab.experiments.cells._kinds import PIPELINE_CELLS, SYSTEM_CELLS
from lyra_lab.experiments.cells._run import run_cell
from lyra_lab.experiments.cells._setup import AnswerPlan, CellPlan

__all__ = [
    "CELL_FAILURES",
    "PIPELINE_CELLS",
    "SYSTEM_CELLS",
    "AnswerPlan",
    "Cell",
    "CellKind",
    "CellNeeds",
    "CellPlan",
    "alias_rows",
    "alias_sources",
    "cell_id",
    "cell_plan",
    "executor_of",
    "grid_points",
    "plan_cells",
    "run_cell",
    "system_cells",
]
