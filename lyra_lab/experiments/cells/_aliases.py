"""Aliased pipelines' cells: which cell is each alias cell's source, and the alias's rows copied from it.

``find_aliases`` (``grid``) finds the pipelines that build the memory of an earlier one, at spec time;
here their cells are paired with their sources' (``alias_sources``) and a source's rows are relabelled
for its alias (``alias_rows``), so every table holds every pipeline the grid names.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from lyra_lab.experiments.cells._cell import Cell, base_columns
from lyra_lab.recall import Recaller
from lyra_lab.runs import CellRows


def alias_sources(aliases: Sequence[dict[str, Any]], cells: Sequence[Cell]) -> dict[str, Cell]:
    """``{alias cell id: source cell}`` for every cell of an aliased pipeline.

    The source is the cell of the ``same_as`` pipeline with the same backend, embedder, seed and
    conversation.
    """
    same_as = {a["pipeline"]: a["same_as"] for a in aliases}
    if not same_as:
        return {}

    def where(c: Cell) -> str:
        return json.dumps([c.backend, c.embedder, c.seed, c.conversation_id], sort_keys=True, default=str)

    by_place = {(c.label, where(c)): c for c in cells}
    return {c.cell_id: by_place[(same_as[c.label], where(c))] for c in cells if c.label in same_as}


def alias_rows(rows: CellRows, source: Cell, alias: Cell, recallers: Mapping[str, Recaller]) -> CellRows:
    """The rows of ``alias``: ``source``'s rows with the alias's cell id, pipeline label and strategy columns.

    Every value (metrics, ``simulated``, ``attempt``) is the source's: the alias's memory is the same.
    """
    def relabel(columns: dict[str, Any]) -> dict[str, Any]:
        label = columns["pipeline"][len(source.label) + 1:]  # "<memory label>|<recaller label>"
        old = base_columns(columns["run"], source, label, recallers[label], columns["corpus"])
        new = base_columns(columns["run"], alias, label, recallers[label], columns["corpus"])
        copied = {k: v for k, v in columns.items() if k not in old or k == "simulated"}
        copied.update({k: v for k, v in new.items() if k != "simulated"})
        return copied

    return rows.map_columns(relabel)
