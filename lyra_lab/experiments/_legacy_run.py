"""``run_experiment`` as the public name: today's call, and for one release the keywords of the last round.

Until 2026-11-26 ``run_experiment`` took its options as keywords
(``run_experiment(spec, run_dir, resume=True, progress=False, backends={...})``, ``resume`` and
``progress`` also third and fourth positionally); they are now ``RunOptions`` and
``Injected``.  A call in the old form still runs, the same run, with a
``DeprecationWarning`` that names the new form; it goes in the next release.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import replace
from typing import Any, Mapping

import pandas as pd

from lyra_lab.experiments.grid import ExperimentSpec, Injected
from lyra_lab.experiments._runner import RunOptions
from lyra_lab.experiments._runner import run_experiment as _run_experiment

_OPTIONS = ("resume", "progress", "ray_address")  # the old keywords that are RunOptions fields now
_INJECTED = ("backends", "embedders")  # ... and Injected fields
_KNOWN = frozenset({*_OPTIONS, *_INJECTED, "registries"})


def run_experiment(spec: ExperimentSpec | str | os.PathLike[str], run_dir: str | os.PathLike[str] | None = None,
                   options: RunOptions | bool | None = None, injected: Injected | bool | None = None,
                   **legacy: object) -> pd.DataFrame:
    """Run (or resume) an experiment and return its tidy results.

    Args:
        spec: an ``ExperimentSpec``, or the path of its TOML file (lyra-lab's own strategies;
            build the spec with ``ExperimentSpec.from_toml(path, registries)`` for your own).
        run_dir: the run folder (default ``runs/<name>``).
        options: resume, progress bars, a Ray cluster to join (``RunOptions``).
        injected: backends and embedders to use for spec labels instead of building them.
        **legacy: deprecated: the keywords of the last round (``resume``, ``progress``,
            ``ray_address``, ``backends``, ``embedders``, ``registries``), honoured with a
            ``DeprecationWarning``; any other keyword is a ``TypeError``.

    Returns:
        The tidy long frame of ``lyra_lab.runs.load_results``; ``df.attrs["failed_cells"]`` lists
        ``(cell_id, error)`` of cells that failed in this run.  Each row's ``attempt`` names the run
        attempt that produced it (its environment is line ``attempt`` of the folder's ``attempts.jsonl``).

    Raises:
        ConfigError: the folder holds another experiment, or a run folder of a schema version this
            lyra-lab does not write; on Ray, an injected backend or embedder that cannot be pickled;
            the cells to run would send conversation text to a place that is not this machine and
            no consent was given (``RunOptions(yes=True)`` or ``ask``, or agreed before): nothing is sent.
    """
    unknown = sorted(set(legacy) - _KNOWN)
    if unknown:
        raise TypeError(f"run_experiment() got an unexpected keyword argument {unknown[0]!r}")
    old = dict(legacy)
    if isinstance(options, bool):  # the old third positional: resume
        old["resume"], options = options, None
    if isinstance(injected, bool):  # the old fourth positional: progress
        old["progress"], injected = injected, None
    if old:
        spec, options, injected = _translated(spec, options, injected, old)
    return _run_experiment(spec, run_dir, options, injected)


def _translated(spec: ExperimentSpec | str | os.PathLike[str], options: RunOptions | None,
                injected: Injected | None, old: Mapping[str, Any],
                ) -> tuple[ExperimentSpec | str | os.PathLike[str], RunOptions, Injected]:
    """The spec, ``RunOptions`` and ``Injected`` a call of the old form means, after one warning naming them."""
    fields = {k: old[k] for k in _OPTIONS if k in old}
    objects = {k: old[k] for k in _INJECTED if k in old and old[k] is not None}
    new = []
    if fields:
        new.append(f"options=RunOptions({', '.join(f'{k}={v!r}' for k, v in fields.items())})")
    if objects:
        new.append(f"injected=Injected({', '.join(f'{k}=...' for k in objects)})")
    if "registries" in old:
        new.append("spec=ExperimentSpec.from_toml(path, registries)")
    warnings.warn(f"run_experiment({', '.join(f'{k}=...' for k in old)}) is deprecated: pass {', '.join(new)} "
                  f"(the keywords go in the next release)", DeprecationWarning, stacklevel=3)
    if "registries" in old and not isinstance(spec, ExperimentSpec):
        spec = ExperimentSpec.from_toml(spec, old["registries"])
    options = replace(options or RunOptions(), **fields)
    injected = replace(injected or Injected(), **objects)
    return spec, options, injected
