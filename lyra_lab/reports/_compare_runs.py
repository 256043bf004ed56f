"""``compare_runs``: the pipelines of two run folders compared paired, on the probes both runs asked.

Two runs of the same corpus (the ``corpus_sha256`` their ``spec.json`` records) are put side by
side as one frame: each pipeline is named ``<run>/<pipeline>``, only the probes both runs scored
(the same conversation and probe id) are kept, and the frame goes through the report's own
"Paired comparisons" section (``_compare_report.paired_section``): every pipeline against the
best on one metric, a cluster-bootstrap CI over conversations, a sign-flip p, Holm-corrected,
the same table, CSV and figure.  Runs of different corpora cannot be paired and are refused in
one line.  When the runs used different seeds, each probe's seeds are averaged within its run
first (the pairing is then by probe alone), and the section says so.  Given one folder, it is
the in-run comparison on the metric asked for.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from lyra_lab._errors import ConfigError
from lyra_lab._run_records import read_spec
from lyra_lab.reports._compare_report import PairedSection, paired_section
from lyra_lab.reports._summary import main_quality_metric
from lyra_lab.runs import load_results
from lyra_lab.stats import group_columns

_PROBE = ["conversation_id", "probe_id"]


@dataclass(frozen=True)
class RunComparison:
    """What ``compare_runs`` compared: the runs' names (as prefixed to their pipelines) and the section."""

    runs: tuple[str, ...]
    section: PairedSection
    shared_probes: int
    only_in: dict[str, int]  # run name -> probes the other run did not ask

    def markdown(self) -> str:
        return self.section.markdown()


def _corpus_sha(run_dir: Path) -> str | None:
    path = run_dir / "spec.json"
    if not path.exists():
        return None
    value = read_spec(path).get("corpus_sha256")
    return str(value) if value else None


def _names(dirs: list[Path]) -> list[str]:
    """The runs' folder names; the parent joins in when two are alike, and a letter when that is not enough."""
    names = [d.name for d in dirs]
    if len(set(names)) < len(names):
        names = [f"{d.parent.name}/{d.name}" for d in dirs]
    if len(set(names)) < len(names):
        names = [f"run {chr(ord('A') + i)}" for i in range(len(dirs))]
    return names


def _probe_rows(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["probe_id"].astype(str) != ""] if "probe_id" in df.columns else df.iloc[0:0]


def _keys(df: pd.DataFrame) -> set[tuple[str, str]]:
    rows = _probe_rows(df)
    return set(zip(rows["conversation_id"].astype(str), rows["probe_id"].astype(str)))


def _without_seeds(df: pd.DataFrame) -> pd.DataFrame:
    """Each pipeline's per-probe value averaged over its seeds, as seed 0 (rows of one run)."""
    rows = _probe_rows(df)
    keys = [*group_columns(rows), *(c for c in ("conversation_id", "probe_id", "metric") if c in rows.columns)]
    return rows.groupby(keys, dropna=False, as_index=False)["value"].mean().assign(seed=0)


def compare_runs(run_a: str | os.PathLike[str], run_b: str | os.PathLike[str] | None = None, *,
                 metric: str | None = None, out: str | os.PathLike[str] | None = None, n_resamples: int = 1000,
                 seed: int = 0, alpha: float = 0.05) -> RunComparison:
    """Compare the pipelines of ``run_a`` and ``run_b`` (or of ``run_a`` alone) on ``metric``, paired.

    Args:
        run_a, run_b: run folders; with ``run_b`` None, the pipelines of ``run_a`` among themselves.
        metric: a per-probe metric both runs scored (default: the report's headline metric).
        out: where ``paired_comparisons.csv`` and ``paired_differences.png`` go (default:
            ``<run_a>/compare`` for one run, ``<parent of run_a>/compare-<a>-vs-<b>`` for two).
        n_resamples, seed, alpha: of the bootstrap, its seed and the test level.

    Raises:
        ConfigError: the runs replay different corpora, share no probe, or ``metric`` is missing
            or not scored per probe in one of them.
        FileNotFoundError, ResultsFormatError: a folder is not a readable run.
    """
    dirs = [Path(run_a)] + ([Path(run_b)] if run_b is not None else [])
    frames = [load_results(d, write=False) for d in dirs]
    names = _names(dirs)
    notes: list[str] = []
    shared: set[tuple[str, str]] = _keys(frames[0])
    only_in: dict[str, int] = {}
    if len(dirs) == 2:
        shas = [_corpus_sha(d) for d in dirs]
        if all(shas) and shas[0] != shas[1]:
            raise ConfigError(f"{dirs[0]} and {dirs[1]} replay different corpora (sha256 {str(shas[0])[:12]}… vs "
                              f"{str(shas[1])[:12]}…): their probes cannot be paired")
        keys = [_keys(f) for f in frames]
        shared = keys[0] & keys[1]
        if not shared:
            raise ConfigError(f"{dirs[0]} and {dirs[1]} share no probe (same conversation and probe id): "
                              "nothing to pair")
        only_in = {names[i]: len(keys[i] - shared) for i in range(2)}
        seeds = [sorted(set(_probe_rows(f)["seed"])) if "seed" in f.columns else [0] for f in frames]
        if seeds[0] != seeds[1]:
            frames = [_without_seeds(f) for f in frames]
            notes.append(f"The runs used different seeds ({names[0]}: {seeds[0]}, {names[1]}: {seeds[1]}): each "
                         "probe's value is averaged over its run's seeds, and pairs are by probe alone.")
        corpus = "the same corpus" + (f" (sha256 {str(shas[0])[:12]}…)" if shas[0] else
                                      " (not recorded in a spec.json: pairing on probe ids alone)")
        extra = "; ".join(f"{n} only in {name}" for name, n in only_in.items() if n)
        notes.insert(0, f"Runs {names[0]} ({dirs[0]}) and {names[1]} ({dirs[1]}) on {corpus}: "
                        f"{len(shared)} probes asked in both{f' ({extra}, left out)' if extra else ''}; "
                        "each pipeline is named run/pipeline.")
        frames = [f.assign(pipeline=name + "/" + f["pipeline"].astype(str)) for f, name in zip(frames, names)]
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    df = _probe_rows(df)
    df = df[[k in shared for k in zip(df["conversation_id"].astype(str), df["probe_id"].astype(str))]]
    metric = metric or main_quality_metric(sorted(set.intersection(*(set(f["metric"]) for f in frames))))
    if metric is None:
        raise ConfigError(f"{', '.join(map(str, dirs))}: no per-probe quality metric in common to compare on")
    for d, f in zip(dirs, frames):
        if metric not in set(_probe_rows(f)["metric"]):
            known = ", ".join(sorted(set(_probe_rows(f)["metric"])))
            raise ConfigError(f"{d}: no per-probe {metric!r} rows to compare; it has: {known}")
    target = Path(out) if out is not None else (
        dirs[0] / "compare" if len(dirs) == 1 else dirs[0].parent / f"compare-{dirs[0].name}-vs-{dirs[1].name}")
    section = paired_section(df, metric, target, cluster="conversation_id", n_resamples=n_resamples, seed=seed,
                             alpha=alpha)
    section.notes[:0] = notes
    return RunComparison(tuple(names), section, len(shared), only_in)
