"""Statistics over tidy result frames: bootstrap CIs and paired comparisons of pipelines.

Percentile-bootstrap intervals, over probes or over whole clusters (conversations), and
paired comparisons of two pipelines on the probes both scored: a cluster-bootstrap CI of the
difference and a sign-flip permutation p over clusters, Holm-corrected across pipelines.
"""

from lyra_lab.stats._bootstrap import (
    GROUP_COLUMNS,
    BootstrapCI,
    Resampling,
    ResamplingOptions,
    aggregate,
    bootstrap_ci,
    cluster_bootstrap_ci,
    group_columns,
)
from lyra_lab.stats._compare import (
    PairedComparison,
    PairedTest,
    compare,
    compare_all,
    compare_values,
    holm,
    probe_values,
    row_pipeline_labels,
    sign_flip_p,
)

__all__ = [
    "GROUP_COLUMNS",
    "BootstrapCI",
    "PairedComparison",
    "PairedTest",
    "Resampling",
    "ResamplingOptions",
    "aggregate",
    "bootstrap_ci",
    "cluster_bootstrap_ci",
    "compare",
    "compare_all",
    "compare_values",
    "group_columns",
    "holm",
    "probe_values",
    "row_pipeline_labels",
    "sign_flip_p",
]
