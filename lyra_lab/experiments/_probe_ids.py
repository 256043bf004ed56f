"""A run's probe ids as a user can name them: the full id, or a unique suffix of it, and the list of them all.

Planted probes have ids such as ``<conversation>:planted-q001``, where a user reads and types
``planted-q001``.  ``resolve_probe_id(known, asked)`` takes the exact id, else the one id that ends with
``asked``; several matches are a ``ConfigError`` naming them all on one line.  ``run_probes(run_dir)``
lists the probes a run asked, each with its conversation and question (``lyra-lab show RUN``).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import pandas as pd

from lyra_lab._registry import ConfigError
from lyra_lab.runs import load_results, run_corpus

# candidates named in an ambiguity error before "… and N more"
SHOWN = 8


@dataclass(frozen=True)
class ProbeListing:
    """One probe a run asked: its id, conversation and question (empty when the corpus no longer loads)."""

    probe_id: str
    conversation_id: str
    question: str


def resolve_probe_id(known: Iterable[str], asked: str, where: str = "this run") -> str:
    """The id of ``known`` that ``asked`` names: itself, else the only id ending with it.

    Raises:
        ConfigError: no id matches (the closest one suggested), or several end with ``asked``
            (all of them named, on one line).
    """
    ids = sorted(set(known))
    if asked in ids:
        return asked
    ends = [i for i in ids if i.endswith(asked)]
    if len(ends) == 1:
        return ends[0]
    if ends:
        named = ", ".join(ends[:SHOWN]) + (f" and {len(ends) - SHOWN} more" if len(ends) > SHOWN else "")
        raise ConfigError(f"{where}: probe {asked!r} is ambiguous: {len(ends)} ids end with it ({named}); "
                          "give more of the id")
    close = difflib.get_close_matches(asked, ids, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else f" ({len(ids)} probes in the run)"
    raise ConfigError(f"{where}: no probe {asked!r} in this run{hint}")


def run_results(run_dir: Path) -> pd.DataFrame:
    """The rows of the run folder ``run_dir`` (``load_results``, nothing written), for ``show``.

    Raises:
        ConfigError: ``run_dir`` is not a run folder with results.
    """
    if not run_dir.is_dir():
        raise ConfigError(f"{run_dir}: no such run folder")
    if not any((run_dir / "rows").glob("*.jsonl")) and not (run_dir / "results.parquet").exists():
        raise ConfigError(f"{run_dir}: not a run folder with results (no rows/*.jsonl or results.parquet)")
    return load_results(run_dir, write=False)


def run_probes(run_dir: str | Path) -> list[ProbeListing]:
    """The probes ``run_dir`` asked, in the order of its rows' conversations and ids, with their questions.

    Raises:
        ConfigError: ``run_dir`` is not a run folder with results.
    """
    run_dir = Path(run_dir)
    df = run_results(run_dir)
    asked = df[df["probe_id"].astype(str) != ""][["conversation_id", "probe_id"]].astype(str).drop_duplicates()
    corpus = run_corpus(run_dir)
    questions = {p.id: p.question for p in corpus.probes} if corpus is not None else {}
    return [ProbeListing(probe, conv, " ".join(str(questions.get(probe, "")).split()))
            for conv, probe in sorted(zip(asked["conversation_id"], asked["probe_id"]))]
