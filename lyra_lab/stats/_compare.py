"""Paired comparisons of pipelines on the same probes: ``compare(df, a, b, metric)`` and ``compare_all``.

The question a reader asks of a results table is "is A better than B on the
same probes?".  Two per-pipeline CIs that overlap do not answer it; a paired
test does.  Here:

* **Pairing.**  A's and B's rows of ``metric`` are joined on the probe
  (``conversation_id``, ``probe_id``) and the seed; probes only one of them
  scored (or scored NaN, e.g. recall on a probe without evidence) are dropped
  and counted.  Seeds are a level *inside* a probe: the per-seed differences
  are averaged within the probe, so running 3 seeds never counts a probe
  3 times.
* **Clusters.**  Probes of one conversation are correlated.  The unit of
  resampling and of sign-flipping is the cluster (``conversation_id`` by
  default; ``cluster=None`` makes each probe its own cluster).
* **Difference and CI.**  ``difference`` = mean over paired probes of
  (A − B).  Its 95% interval is the percentile cluster bootstrap of
  ``_bootstrap.cluster_bootstrap_ci``: whole clusters are resampled with
  replacement, each with its pairs intact, and the mean difference is
  recomputed as (sum of resampled differences) / (number of resampled probes).
* **p-value.**  A sign-flip permutation test: under "A and B are
  exchangeable", the sign of each cluster's summed difference is a coin flip.
  Two-sided p = share of sign patterns whose |mean| is at least the observed
  one.  Exact (all 2^G patterns) up to ``EXACT_MAX_CLUSTERS`` clusters, Monte
  Carlo otherwise with p = (1 + hits) / (1 + draws).  With G clusters the
  smallest exact p is 2 / 2^G: five conversations can never give p < 0.0625.

``compare_all`` compares every pipeline with the best one (by mean) and
corrects the p-values for the number of comparisons (Holm–Bonferroni).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TypedDict, Unpack

import numpy as np
import pandas as pd

from lyra_lab._registry import ConfigError
from lyra_lab.stats._bootstrap import NESTED_LEVELS, cluster_bootstrap_ci, group_columns

EXACT_MAX_CLUSTERS = 16  # 2^16 = 65,536 sign patterns: enumerate them all; beyond, draw at random
_PROBE_KEY = ("conversation_id", "probe_id")


@dataclass(frozen=True)
class PairedComparison:
    """A − B on ``metric`` over the probes both scored (see the module docstring for the method)."""

    a: str
    b: str
    metric: str
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    n_probes: int
    n_clusters: int
    n_dropped: int
    method: str

    def to_row(self) -> dict:
        return asdict(self)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([self.to_row()])


def row_pipeline_labels(df: pd.DataFrame) -> pd.Series:
    """Each row's pipeline label: ``pipeline``, plus ``|backend=x`` etc. for group columns that vary in ``df``.

    A row without a value of such a column gets no part for it: a run with ``[qa] prompts`` labels its
    QA rows ``p|answer_prompt=locomo`` and keeps the recall rows, which no prompt made, ``p``.
    """
    keys = group_columns(df)
    if "pipeline" not in keys:
        raise ConfigError(f"results have no 'pipeline' column; they have {list(df.columns)}")
    labels = df["pipeline"].astype(str)
    for key in keys[1:]:
        if df[key].nunique(dropna=False) > 1:
            given = df[key].notna() & (df[key].astype(str) != "")
            labels = labels.where(~given, labels + "|" + key + "=" + df[key].astype(str))
    return labels


def _resolve(name: str, values: pd.DataFrame, metric: str) -> str:
    """The label ``name`` means: itself, or the one label of the bare ``pipeline`` ``name``."""
    pipelines = values.attrs["pipelines"]
    known = sorted(pipelines)
    matches = [name] if name in pipelines else sorted(k for k, bare in pipelines.items() if bare == name)
    if len(matches) > 1:
        raise ConfigError(f"pipeline {name!r} is ambiguous (it ran under several backends/embedders): "
                          f"pick one of {', '.join(matches)}")
    if not matches:
        raise ConfigError(f"unknown pipeline {name!r}; the results have: {', '.join(known)}")
    if matches[0] not in set(values["label"]):
        raise ConfigError(f"pipeline {matches[0]!r} has no per-probe {metric!r} values")
    return matches[0]


def _cluster_column(df: pd.DataFrame, cluster: str | None) -> str | None:
    if cluster is None:
        return None
    if cluster in df.columns:
        return cluster
    if f"{cluster}_id" in df.columns:  # cluster="conversation" means the conversation_id column
        return f"{cluster}_id"
    raise ConfigError(f"cannot cluster by {cluster!r}: results have no such column")


def probe_values(df: pd.DataFrame, metric: str, cluster: str | None = "conversation") -> pd.DataFrame:
    """The rows of ``metric`` that can be paired: ``label``, probe key, ``seed``, ``cluster``, ``value``.

    Raises ConfigError for an unknown metric, a metric with no per-probe rows,
    or a pipeline with two rows for one probe and seed (two variants mixed).
    """
    if "metric" not in df.columns or "value" not in df.columns:
        raise ConfigError(f"results need 'metric' and 'value' columns; they have {list(df.columns)}")
    if metric not in set(df["metric"]):
        raise ConfigError(f"unknown metric {metric!r}; the results have: {', '.join(sorted(df['metric'].unique()))}")
    key = [c for c in _PROBE_KEY if c in df.columns]
    if "probe_id" not in key:
        raise ConfigError("results have no 'probe_id' column: nothing to pair on")
    df = df.reset_index(drop=True)  # concatenated frames repeat index labels
    rows = df[(df["metric"] == metric) & (df["probe_id"].astype(str) != "")]
    if rows.empty:
        raise ConfigError(f"metric {metric!r} has no per-probe rows (it is per conversation): nothing to pair")
    column = _cluster_column(df, cluster)
    rows = rows.dropna(subset=["value"])  # undefined on this probe (e.g. recall without evidence): not a score
    labels = row_pipeline_labels(df)
    out = pd.DataFrame({"label": labels.loc[rows.index]})
    # every pipeline label of the run and its bare pipeline name, for _resolve and its messages
    pairs = pd.DataFrame({"label": labels, "pipeline": df["pipeline"].astype(str)}).drop_duplicates()
    out.attrs["pipelines"] = dict(zip(pairs["label"], pairs["pipeline"]))
    for k in key:
        out[k] = rows[k].astype(str)
    # integer codes for probes and clusters keep the pairing fast (compare_all runs it once per pipeline)
    out["probe"] = out.groupby(key, sort=True).ngroup()
    # seeds and answer repeats nest inside a probe: one level code per (seed, repeat) pair
    levels = [c for c in NESTED_LEVELS if c in rows.columns]
    out["seed"] = (rows["seed"] if levels == ["seed"] else rows.groupby(levels, dropna=False, sort=True).ngroup()) \
        if levels else 0
    # no cluster column: every probe is its own cluster (its seeds stay together in it)
    out["cluster"] = pd.factorize(rows[column].astype(str), sort=True)[0] if column else out["probe"]
    out["value"] = rows["value"].astype(float)
    twice = out.duplicated(["label", "probe", "seed"], keep=False)
    if twice.any():
        first = out[twice].iloc[0]
        raise ConfigError(f"pipeline {first['label']!r} has {int(twice.sum())} {metric!r} rows for probe "
                          f"{tuple(first[key])} and seed {first['seed']}: the results mix variants under one "
                          "label; select one before comparing")
    spread = out.groupby("probe")["cluster"].nunique()
    if (spread > 1).any():
        where = out.loc[out["probe"] == spread.index[spread > 1][0], key].iloc[0]
        raise ConfigError(f"cluster column {column!r} varies within probe {tuple(where)}: "
                          "a cluster must contain whole probes")
    return out


def sign_flip_p(cluster_sums: np.ndarray, n_perm: int = 10_000, seed: int = 0) -> tuple[float, str]:
    """Two-sided p of the sign-flip test on per-cluster sums of differences, and how it was computed."""
    sums = np.asarray(cluster_sums, dtype=float)
    g = len(sums)
    observed = abs(sums.sum())
    tolerance = 1e-9 * max(1.0, float(np.abs(sums).sum()))  # equal sums in other orders are ties, not misses
    if g <= EXACT_MAX_CLUSTERS:
        patterns = 1 - 2 * ((np.arange(2**g)[:, None] >> np.arange(g)) & 1)
        flipped = np.abs(patterns @ sums)
        return float(np.mean(flipped >= observed - tolerance)), f"exact sign-flip test ({2**g} sign patterns)"
    rng = np.random.default_rng(seed)
    hits, done = 0, 0
    block = max(1, 2_000_000 // g)
    while done < n_perm:
        signs = rng.choice((-1.0, 1.0), size=(min(block, n_perm - done), g))
        hits += int(np.sum(np.abs(signs @ sums) >= observed - tolerance))
        done += len(signs)
    return (1 + hits) / (1 + n_perm), f"Monte Carlo sign-flip test ({n_perm} draws)"


def _paired(values: pd.DataFrame, a: str, b: str) -> tuple[pd.DataFrame, int]:
    """One row per probe both scored: ``cluster`` and ``diff`` (A − B averaged over shared seeds); n dropped."""
    label = values["label"].to_numpy()
    probe, cluster, value = (values[c].to_numpy() for c in ("probe", "cluster", "value"))
    seed = pd.factorize(values["seed"])[0]
    key = probe.astype(np.int64) * (seed.max() + 1) + seed  # one integer per (probe, seed)
    in_a, in_b = label == a, label == b
    # keys are unique per pipeline (probe_values checked it), so this is an inner join
    _, ia, ib = np.intersect1d(key[in_a], key[in_b], assume_unique=True, return_indices=True)
    diff = value[in_a][ia] - value[in_b][ib]
    probes, inverse = np.unique(probe[in_a][ia], return_inverse=True)
    per_probe = np.bincount(inverse, weights=diff) / np.bincount(inverse)
    first = np.zeros(len(probes), dtype=np.int64)
    first[inverse[::-1]] = np.arange(len(inverse))[::-1]  # a row of each probe, for its cluster
    pairs = pd.DataFrame({"probe": probes, "cluster": cluster[in_a][ia][first], "diff": per_probe})
    n_all = len(np.unique(probe[in_a | in_b]))
    return pairs, n_all - len(pairs)


@dataclass(frozen=True)
class PairedTest:
    """How a paired comparison is tested.

    Attributes:
        cluster: column whose values are resampled and sign-flipped as units
            (``"conversation"`` = ``conversation_id``); None: every probe alone.
        n_boot: bootstrap resamples for the CI of the difference.
        n_perm: Monte Carlo sign-flip draws when there are more than ``EXACT_MAX_CLUSTERS`` clusters.
        confidence: the interval's coverage.
        seed: of the bootstrap and of the Monte Carlo draws.
    """

    cluster: str | None = "conversation"
    n_boot: int = 1000
    n_perm: int = 10_000
    confidence: float = 0.95
    seed: int = 0


class PairedTestOptions(TypedDict, total=False):
    """The fields of ``PairedTest`` as keywords, each optional."""

    cluster: str | None
    n_boot: int
    n_perm: int
    confidence: float
    seed: int


def compare(df: pd.DataFrame, a: str, b: str, metric: str, **test: Unpack[PairedTestOptions]) -> PairedComparison:
    """Pipeline ``a`` minus pipeline ``b`` on ``metric``, paired on the same probes (see the module docstring).

    Args:
        df: tidy result rows of a run (``load_results`` / ``read_results``).
        a: a pipeline label (``row_pipeline_labels``); a bare ``pipeline`` is
            accepted when it ran under one backend and embedder.
        b: the pipeline ``a`` is compared with, labelled the same way.
        metric: a per-probe metric, e.g. ``"recall@10"``.
        **test: ``PairedTest``'s fields (``cluster``, ``n_boot``, ``n_perm``, ``confidence``, ``seed``).
    """
    paired = PairedTest(**test)
    values = probe_values(df, metric, paired.cluster)
    a, b = _resolve(a, values, metric), _resolve(b, values, metric)
    if a == b:
        raise ConfigError(f"compare needs two different pipelines; got {a!r} twice")
    return compare_values(values, a, b, metric, paired)


def compare_values(values: pd.DataFrame, a: str, b: str, metric: str, how: PairedTest) -> PairedComparison:
    """``compare`` on the per-probe ``values`` of ``probe_values``, the labels resolved."""
    cluster, n_boot, n_perm, confidence, seed = how.cluster, how.n_boot, how.n_perm, how.confidence, how.seed
    pairs, dropped = _paired(values, a, b)
    if pairs.empty:
        raise ConfigError(f"pipelines {a!r} and {b!r} share no probe (and seed) scored on {metric!r}")
    ci = cluster_bootstrap_ci(pairs["diff"].to_numpy(), pairs["cluster"].tolist(), n_boot, confidence, seed)
    sums = pairs.groupby("cluster", sort=True)["diff"].sum().to_numpy()
    p, test = sign_flip_p(sums, n_perm, seed)
    unit = f"{cluster} clusters" if cluster else "probes"
    low, high = ci.low, ci.high
    if len(sums) < 2:  # one cluster: the bootstrap can only return it again; say nothing rather than width 0
        low = high = float("nan")
        test += "; one cluster: no interval"
    method = f"paired cluster bootstrap over {len(sums)} {unit} ({n_boot} resamples) + {test}"
    return PairedComparison(a, b, metric, ci.mean, low, high, p, len(pairs), len(sums), dropped, method)


def holm(p_values) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values (NaN stays NaN and does not count as a comparison)."""
    p = np.asarray(p_values, dtype=float)
    out = np.full_like(p, np.nan)
    idx = np.flatnonzero(~np.isnan(p))
    order = idx[np.argsort(p[idx], kind="stable")]
    m = len(order)
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out[order] = adjusted
    return out


def _higher_is_better(metric: str) -> bool:
    """The registry's direction of ``metric`` (``lyra_lab.measures.Measure``); higher for a name it lacks."""
    from lyra_lab.measures import Measure

    try:
        info = Measure.parse(metric).info
    except ValueError:
        return True
    return True if info is None else info.higher_is_better


def compare_all(df: pd.DataFrame, metric: str, *, alpha: float = 0.05, higher_is_better: bool | None = None,
                **test: Unpack[PairedTestOptions]) -> pd.DataFrame:
    """Every pipeline against the best one on ``metric``, Holm-corrected over the comparisons.

    The best pipeline has the highest mean over its probes (lowest when
    ``higher_is_better`` is False; None: as the measure registry says, ``MeasureInfo.higher_is_better``,
    higher for a name it does not define; seeds averaged within each probe first).
    Returns one row per pipeline, best first then by mean: ``pipeline``,
    ``best``, ``metric``, ``mean``, ``difference`` (pipeline − best, paired),
    ``ci_low``, ``ci_high``, ``p_value``, ``p_holm``, ``not_worse_than_best``
    (not significantly worse at ``alpha`` after the correction), ``n_probes``,
    ``n_clusters``, ``n_dropped`` and ``method``.  The best's own row has
    difference 0 and no test.  ``test`` are ``PairedTest``'s fields (``cluster``, ``n_boot``…).
    """
    if higher_is_better is None:
        higher_is_better = _higher_is_better(metric)
    paired = PairedTest(**test)
    values = probe_values(df, metric, paired.cluster)
    per_probe = values.groupby(["label", "probe"])["value"].mean()
    means = per_probe.groupby(level="label").mean().sort_index()
    if means.empty:
        raise ConfigError(f"no pipeline has a {metric!r} value to compare")
    means = means.sort_values(ascending=not higher_is_better, kind="stable")
    best = str(means.index[0])
    rows = [{"pipeline": best, "best": best, "metric": metric, "mean": float(means.iloc[0]), "difference": 0.0,
             "ci_low": np.nan, "ci_high": np.nan, "p_value": np.nan,
             "n_probes": int(per_probe.loc[best].shape[0]), "n_clusters": int(
                 values.loc[values["label"] == best, "cluster"].nunique()),
             "n_dropped": 0, "method": "best by mean"}]
    for label, mean in means.iloc[1:].items():
        try:
            row = compare_values(values, str(label), best, metric, paired).to_row()
        except ConfigError as exc:  # no probe in common with the best: nothing to test, say so in the row
            row = {"a": str(label), "b": best, "difference": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                   "p_value": np.nan, "n_probes": 0, "n_clusters": 0, "n_dropped": 0, "method": str(exc)}
        row.pop("metric", None)
        rows.append({"pipeline": row.pop("a"), "best": row.pop("b"), "metric": metric, "mean": float(mean), **row})
    out = pd.DataFrame(rows)
    out["p_holm"] = holm(out["p_value"])
    worse = out["difference"] < 0 if higher_is_better else out["difference"] > 0
    out["not_worse_than_best"] = (~((out["p_holm"] < alpha) & worse)).astype("boolean")
    out.loc[out["difference"].isna(), "not_worse_than_best"] = pd.NA  # no shared probe: untested
    columns = ["pipeline", "best", "metric", "mean", "difference", "ci_low", "ci_high", "p_value", "p_holm",
               "not_worse_than_best", "n_probes", "n_clusters", "n_dropped", "method"]
    return out[columns]
