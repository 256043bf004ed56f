"""The executors: how a run's cells are run, one at a time or several at once, and watched.

Holds the ``CellExecutor`` protocol and its job and outcome (``CellJob``, ``CellOutcome``,
``RunContext``), the in-process executors (``SerialCells``, ``ThreadCells``), worker processes
(``CellProcesses``), Ray tasks (``RayCells``), the task a cell is outside the driver's process
(``_cell_task``), the locks and slots one machine's processes share (``_machine_locks``) and the
run's heartbeat (``Heartbeat``: cells done, running, their rate).

May import ``grid`` and ``cells`` (through their faces); never ``forecast`` nor ``lyra_lab.experiments``
itself.  The runner imports it through this face.
"""

from lyra_lab.experiments.executors._cell_task import add_embeddings
from lyra_lab.experiments.executors._heartbeat import CellCount, Heartbeat
from lyra_lab.experiments.executors._in_process import (CellExecutor, CellJob, CellOutcome, RunContext, SerialCells,
                                                        ThreadCells)
from lyra_lab.experiments.executors._processes import CellProcesses, cells_at_once
from lyra_lab.experiments.executors._ray import RayCells

__all__ = [
    "CellCount",
    "CellExecutor",
    "CellJob",
    "CellOutcome",
    "CellProcesses",
    "Heartbeat",
    "RayCells",
    "RunContext",
    "SerialCells",
    "ThreadCells",
    "add_embeddings",
    "cells_at_once",
]
