"""The report's "Paired comparisons" section: every pipeline against the best on the lead metric.

``paired_section`` runs ``compare_all`` and returns what ``summary.md`` and
``report.html`` show: a sentence saying what was tested, a table (difference,
95% CI, Holm-adjusted p, a verdict in words, n probes, n clusters) and, with two
or more pipelines, the ``paired_differences.png`` figure and
``paired_comparisons.csv``.  The lead metric is chosen by the caller (the
report takes the first quality metric of its summary table).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict, Unpack
import pandas as pd

from lyra_lab._registry import ConfigError
from lyra_lab.reports._contenders import ceilings_apart, contenders
from lyra_lab.stats import compare_all
from lyra_lab.reports._compare_plots import comparison_plot

HEADER = ["pipeline", "difference vs best", "95% CI", "p (Holm)", "verdict", "n probes", "n clusters"]
WORSE = "✗ worse"
NO_DIFFERENCE = "no difference shown"
TOO_FEW = "not shown worse (n too small)"


@dataclass
class PairedSection:
    """Text, table cells and files of the section (``table`` is None when nothing was compared)."""

    metric: str | None
    notes: list[str]
    header: list[str] = field(default_factory=lambda: list(HEADER))
    body: list[list[str]] = field(default_factory=list)
    table: pd.DataFrame | None = None
    files: list[Path] = field(default_factory=list)

    def markdown(self) -> str:
        lines = [f"\n## Paired comparisons{f': {self.metric}' if self.metric else ''}\n"] + [
            n + "\n" for n in self.notes]
        if self.body:
            lines += markdown_table(self.header, self.body)
        return "\n".join(lines) + "\n"


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """The lines of a markdown table of ready-formatted cells (a ``|`` inside a cell escaped)."""
    return (["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
            + ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows])


def lead_metric(summary: pd.DataFrame, df: pd.DataFrame, preferred: str | None = None) -> str | None:
    """The metric a comparison leads with.

    ``preferred`` (the report's headline metric) if it is scored per probe, else the first
    summary column that is a quality metric (it has a CI) scored per probe.
    """
    per_probe = set(df.loc[df["probe_id"].astype(str) != "", "metric"]) if "probe_id" in df.columns else set()
    if preferred in per_probe and f"{preferred}_ci_low" in summary.columns:
        return preferred
    for column in summary.columns:
        if column in per_probe and f"{column}_ci_low" in summary.columns:
            return str(column)
    return None


def verdict(row: pd.Series, alpha: float = 0.05, comparisons: int = 1) -> str:
    """One comparison's row of ``compare_all`` in words that agree with its numbers.

    ``✗ worse``: the Holm-adjusted p is below ``alpha``.  Otherwise nothing was shown, and
    the words say why when the 95% CI alone excludes 0 (the CI is not adjusted for
    multiplicity, and with few units the bootstrap interval is narrower than the
    permutation test allows): ``not shown worse (n too small)``, naming the comparisons
    when the p before the correction was below ``alpha``.  ``no difference shown``: the
    CI holds 0 (or there is none).
    """
    if pd.isna(row["difference"]):
        return "? not tested"
    if pd.notna(row["p_holm"]) and row["p_holm"] < alpha and not bool(row["not_worse_than_best"]):
        return WORSE
    excludes_zero = pd.notna(row["ci_low"]) and (row["ci_high"] < 0 or row["ci_low"] > 0)
    if not excludes_zero:
        return NO_DIFFERENCE
    if pd.notna(row["p_value"]) and row["p_value"] < alpha and comparisons > 1:
        return (f"not shown worse (n too small for {comparisons} comparisons: "
                f"p {row['p_value']:.3g} before Holm)")
    return TOO_FEW


def _cells(table: pd.DataFrame, alpha: float = 0.05) -> list[list[str]]:
    body = []
    comparisons = max(1, len(table) - 1)
    for _, row in table.iterrows():
        if row["pipeline"] == row["best"]:
            body.append([str(row["pipeline"]), f"best (mean {row['mean']:.3f})", "", "", "best",
                         str(int(row["n_probes"])), str(int(row["n_clusters"]))])
            continue
        if pd.isna(row["difference"]):
            body.append([str(row["pipeline"]), "not tested", row["method"], "", verdict(row, alpha), "0", "0"])
            continue
        ci = "" if pd.isna(row["ci_low"]) else f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]"
        body.append([str(row["pipeline"]), f"{row['difference']:+.3f}", ci, f"{row['p_holm']:.3g}",
                     verdict(row, alpha, comparisons), str(int(row["n_probes"])), str(int(row["n_clusters"]))])
    return body


def _single_cluster(df: pd.DataFrame, metric: str, cluster: str | None) -> tuple[str, str] | None:
    """(unit name, its value) when every per-probe row of ``metric`` lies in one ``cluster``, else None."""
    if cluster is None or cluster not in df.columns or "probe_id" not in df.columns:
        return None
    values = df.loc[(df["metric"] == metric) & (df["probe_id"].astype(str) != ""), cluster].astype(str).unique()
    if len(values) != 1:
        return None
    return cluster.removesuffix("_id"), values[0]


class PairedSettings(TypedDict, total=False):
    """How the paired comparisons are computed: bootstrap resamples, their seed, the test level (0.05)."""

    n_resamples: int
    seed: int
    alpha: float


def paired_section(df: pd.DataFrame, metric: str | None, out: Path, *, cluster: str | None,
                   **settings: Unpack[PairedSettings]) -> PairedSection:
    """Compare every pipeline of ``df`` with the best on ``metric``; write the CSV and figure into ``out``."""
    n_resamples, seed, alpha = settings.get("n_resamples", 1000), settings.get("seed", 0), settings.get("alpha", 0.05)
    if metric is None:
        return PairedSection(None, ["No per-probe quality metric in this run: nothing to compare."])
    apart = ceilings_apart(df)
    df = contenders(df)
    single = _single_cluster(df, metric, cluster)
    if single is not None:  # one conversation: clustering would leave nothing to resample; use its probes
        cluster = None
    try:
        table = compare_all(df, metric, cluster=cluster, n_boot=n_resamples, seed=seed, alpha=alpha)
    except ConfigError as exc:
        return PairedSection(metric, [f"Not computed: {exc}."])
    if len(table) < 2:
        return PairedSection(metric, [f"Only one pipeline ({table['pipeline'].iloc[0]}) in this run: "
                                      "nothing to compare."])
    unit = {None: "probe", "conversation_id": "conversation"}.get(cluster, str(cluster))
    units = "probes" if cluster is None else f"whole {unit}s"
    m = len(table) - 1
    notes = [f"Each pipeline minus the best by mean {metric} ({table['best'].iloc[0]}), on the probes both "
             "scored (paired by probe and seed; seeds averaged within a probe): 95% CI from a bootstrap "
             f"resampling {units} (not adjusted for multiplicity), p from a sign-flip permutation test "
             f"flipping {units}, Holm-adjusted over {m} comparison{'s' if m > 1 else ''}. Verdict at α = {alpha:g}: "
             f"\"{WORSE}\" = the Holm-adjusted p is below α; \"{NO_DIFFERENCE}\" = it is not and the CI holds 0; "
             f"\"{TOO_FEW}\" = the CI excludes 0 but the adjusted p does not reach α (too few probes or "
             "clusters for the test, or for the number of comparisons): a likely difference, not shown."]
    if apart:
        notes.append(f"The ceilings ({', '.join(apart)}) are not compared here: they bound what a strategy could "
                     "reach; every pipeline's distance to them is in \"Distance to the ceilings\".")
    if single is not None:
        notes.append(f"All probes come from one {single[0]} ({single[1]!r}), so each probe is a unit here: the test "
                     f"asks whether a pipeline is worse on this {single[0]}'s probes and says nothing about "
                     f"other {single[0]}s; probes that share sessions or facts make p optimistic.")
    clusters = int(table["n_clusters"].iloc[1:].max())
    if clusters == 1:
        notes.append(f"All paired probes come from one {unit}: there is no interval and p = 1 whatever the "
                     f"difference; add {unit}s.")
    elif 0 < clusters <= 5:
        notes.append(f"With {clusters} {unit}s the smallest possible p is 2/2^{clusters} = "
                     f"{2 / 2**clusters:.3g}: differences cannot reach significance; add {unit}s.")
    section = PairedSection(metric, notes, body=_cells(table, alpha), table=table)
    out.mkdir(parents=True, exist_ok=True)
    section.files = [out / "paired_comparisons.csv"]
    table.to_csv(section.files[0], index=False)
    section.files.append(comparison_plot(table, out / "paired_differences.png", alpha))
    return section

