"""Reports: what a run's rows say, with their uncertainty — summaries, paired comparisons, figures, HTML.

Everything here reads tidy result frames (``lyra_lab.runs.load_results``): per-pipeline
summaries with bootstrap CIs (``summarize_results``), the paired comparisons of
``lyra_lab.stats`` as report sections and figures, judge agreement, category labels, and
``write_report`` for a run folder's ``report/``.
"""

from lyra_lab.reports._agreement import cohen_kappa, judge_agreement, judge_table, split_judges
from lyra_lab.reports._compare_plots import comparison_plot
from lyra_lab.reports._labels import LOCOMO_LABELS, category_label, label_categories
from lyra_lab.reports._frames import budget_frame
from lyra_lab.reports._plots import quality_vs_context_tokens
from lyra_lab.reports._report import write_report
from lyra_lab.reports._summary import summarize_results

__all__ = [
    "LOCOMO_LABELS",
    "budget_frame",
    "category_label",
    "cohen_kappa",
    "comparison_plot",
    "judge_agreement",
    "judge_table",
    "label_categories",
    "quality_vs_context_tokens",
    "split_judges",
    "summarize_results",
    "write_report",
]
