"""The one road of every entry that sends text or makes rows: forecast → consent → execute → rows.

``run_experiment`` is the road, and ``lyra-lab run``, ``rescore``, ``recall-eval``, ``demo``, the
API and the notebooks' helpers are ways onto it, never roads of their own.  Before it touches the
run folder it asks this module where the text of the cells it will run can go (the plan's
``remote_endpoints`` when a forecast was made, else every destination of the cells to run:
``forecast.destinations``) and refuses to go on unless each place that is not this machine was
agreed to: before (kept in the user cache, per endpoint and corpus), up front
(``RunOptions(yes=True)``, the CLI's ``--yes``), or by the caller's question (``RunOptions(ask=...)``:
the CLI asks on a terminal).  From the API, with neither, it stops with one ``ConfigError`` line
naming the endpoint, before the first request.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, Sequence

from lyra_lab._atomic import write_whole
from lyra_lab._registry import ConfigError

if TYPE_CHECKING:
    from lyra_lab.experiments.cells import Cell, CellSetup
    from lyra_lab.experiments.grid import ExperimentSpec, Injected


class Ask(Protocol):
    """The caller's question before text goes to a place that is not this machine (the CLI: a prompt)."""

    def __call__(self, endpoint: str, corpus: str) -> None:
        """Return when the user agrees to send ``corpus``'s conversation text to ``endpoint``.

        Raises:
            ConfigError: the user does not agree (one line, in the caller's words).
        """
        ...


def remote_of(todo: Sequence[Cell], setup: CellSetup, injected: Injected,
              planned: Sequence[str] | None) -> list[str]:
    """The places that are not this machine the text of ``todo`` can reach (``planned``: the forecast's).

    The forecast (``Forecast.remote``) leaves out a backend it gives no call (an LLM-free grid sends its
    backend nothing); without one, every destination of the cells to run counts.
    """
    if planned is not None:
        return [str(e) for e in planned]
    from lyra_lab.experiments.forecast import destinations

    return list(dict.fromkeys(d.where for d in destinations(todo, setup, injected) if not d.local))


def consent(spec: ExperimentSpec, remote: Sequence[str], corpus_sha256: str, yes: bool, ask: Ask | None) -> None:
    """Go on only if sending ``spec``'s corpus to every endpoint of ``remote`` was agreed (see the module docstring).

    Raises:
        ConfigError: an endpoint not agreed to, named (from the API: how to agree).
    """
    for endpoint in remote:
        if agreed(endpoint, corpus_sha256):
            continue
        if not yes:
            if ask is None:
                raise ConfigError(f"not sending conversation text of {spec.corpus.path} to {endpoint}: "
                                  "agree with RunOptions(yes=True) (lyra-lab's --yes)")
            ask(endpoint, str(spec.corpus.path))
        remember(endpoint, corpus_sha256)


def _consent_path() -> Path:
    from lyra_lab.backends import cache_dir

    return cache_dir() / "consent.json"


def agreed(endpoint: str, corpus_sha256: str) -> bool:
    """Whether the user agreed before to send this corpus's text to ``endpoint``."""
    try:
        kept = json.loads(_consent_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(kept, dict) and f"{endpoint} {corpus_sha256}" in kept


def remember(endpoint: str, corpus_sha256: str) -> None:
    """Keep that the user agreed to send this corpus's text to ``endpoint`` (with the date)."""
    path = _consent_path()
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        kept = {}
    kept[f"{endpoint} {corpus_sha256}"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    write_whole(path, json.dumps(kept, indent=1, sort_keys=True))
