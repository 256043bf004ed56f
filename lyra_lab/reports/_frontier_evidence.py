"""Dominance with evidence: is a dominator's quality above the dominated pipeline's beyond the noise?

``_frontier.pareto`` decides dominance on the means.  Two means a few hundredths apart on 24 probes say
little, so before the frontier's table names a pipeline "dominated", the dominator's quality is compared
with the dominated pipeline's on the probes both scored (``stats.compare``: the paired difference,
dominator minus dominated, seeds averaged within a probe, its 95% CI from a cluster bootstrap resampling
whole conversations; probes as units when every probe comes from one conversation).  The dominance is
**shown** when

* the CI lies above 0 and the paired sign-flip test (``stats.compare``'s p, flipping the same units) is below
  ``ALPHA`` (the dominator is better on the same probes, beyond the noise: with 2 conversations p is never
  below 0.5, so a CI of two clusters alone never names a pipeline dominated), or
* the dominator is strictly cheaper on the axis and the difference is 0 in every resample (the same
  quality on every conversation, e.g. the same answers, at less cost).

Otherwise it holds **on means only, not significant**, and the table says so with the difference, its CI
and n.  The CIs are not adjusted for the number of pairs tested (each is read on its own).  Costs are
taken as measured (context tokens are counted, not drawn); only the quality is tested.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypedDict

import pandas as pd

from lyra_lab._registry import ConfigError
from lyra_lab.stats import PairedTest, compare_values, probe_values

ALPHA = 0.05  # the sign-flip test's level behind "dominated by"
MAX_TESTED = 3  # dominators tested per pipeline and axis, best quality first, until one is shown


class Resampling(TypedDict, total=False):
    """The paired tests' bootstrap: its resamples (1000) and seed (0)."""

    n_resamples: int
    seed: int


@dataclass(frozen=True)
class DominanceEvidence:
    """The paired quality difference of a dominator over a pipeline it dominates on the means.

    Attributes:
        dominator: the pipeline that dominates on the means.
        difference: dominator minus dominated, mean over the paired probes (NaN: not tested).
        low: the 95% CI's lower end (NaN: no interval).
        high: its upper end.
        p: the sign-flip test's two-sided p (NaN: not tested).
        n: the paired probes.
        clusters: the units resampled (conversations, or probes when all come from one).
        unit: what the bootstrap resampled (whole conversations, or probes when all come from one).
        cheaper: the dominator is strictly cheaper on the axis.
        why: why there is no test (empty when there is one).
    """

    dominator: str
    difference: float
    low: float
    high: float
    p: float
    n: int
    clusters: int
    unit: str
    cheaper: bool
    why: str = ""

    @property
    def shown(self) -> bool:
        """The dominance holds beyond the noise (see the module docstring)."""
        if math.isnan(self.low) or math.isnan(self.high):
            return False
        same_everywhere = self.low == self.high == self.difference == 0.0
        return (self.low > 0 and self.p < ALPHA) or (self.cheaper and same_everywhere)

    def text(self) -> str:
        """``Δ +0.250 [+0.100, +0.400], p=0.031, n=24`` (or why it was not tested)."""
        if self.why:
            return f"untested: {self.why}"
        if math.isnan(self.low):
            return f"Δ {self.difference:+.3f}, no interval, n={self.n}"
        d, lo, hi = (round(x, 3) + 0.0 for x in (self.difference, self.low, self.high))  # never "-0.000"
        return f"Δ {d:+.3f} [{lo:+.3f}, {hi:+.3f}], p={self.p:.2g}, n={self.n}"


class PairedQuality:
    """The paired tests of one run's quality measure, each pair tested once whatever the axes asking."""

    def __init__(self, df: pd.DataFrame, metric: str, n_resamples: int = 1000, seed: int = 0) -> None:
        """Test pipelines of ``df`` (labelled as ``row_pipeline_labels`` labels them) on ``metric``."""
        self.df, self.metric, self.n_resamples, self.seed = df, metric, n_resamples, seed
        probes = df[(df["metric"] == metric) & (df["probe_id"].astype(str) != "")] if "metric" in df.columns \
            else df.iloc[:0]
        one = "conversation_id" not in df.columns or probes["conversation_id"].astype(str).nunique() <= 1
        self.cluster: str | None = None if one else "conversation"
        self.unit = "probes (all from one conversation)" if one else "whole conversations"
        self._done: dict[tuple[str, str], DominanceEvidence] = {}
        self._values: pd.DataFrame | None = None  # the per-probe values, read once (``stats.probe_values``)

    def method(self) -> str:
        """The method in one phrase, for the table's notes."""
        return (f"paired difference on the probes both scored, 95% CI from a bootstrap resampling "
                f"{self.unit} ({self.n_resamples} resamples) and p from a sign-flip test flipping them, "
                f"shown at p < {ALPHA:g}, not adjusted for multiplicity")

    def evidence(self, dominator: str, dominated: str, cheaper: bool) -> DominanceEvidence:
        """``dominator`` minus ``dominated`` on the run's quality measure."""
        if (dominator, dominated) not in self._done:
            try:
                if self._values is None:
                    self._values = probe_values(self.df, self.metric, self.cluster)
                how = PairedTest(cluster=self.cluster, n_boot=self.n_resamples, seed=self.seed)
                c = compare_values(self._values, dominator, dominated, self.metric, how)
                found = DominanceEvidence(dominator, c.difference, c.ci_low, c.ci_high, c.p_value, c.n_probes,
                                          c.n_clusters, self.unit, cheaper)
            except ConfigError as exc:  # no probe in common, or no per-probe values: nothing to test
                found = DominanceEvidence(dominator, math.nan, math.nan, math.nan, math.nan, 0, 0, self.unit, cheaper,
                                          why=str(exc))
            self._done[(dominator, dominated)] = found
        done = self._done[(dominator, dominated)]
        return done if done.cheaper == cheaper else DominanceEvidence(**{**done.__dict__, "cheaper": cheaper})
