"""Reports: what a run's rows say, with their uncertainty — summaries, paired comparisons, figures, HTML.

Everything here reads tidy result frames (``lyra_lab.runs.load_results``): per-pipeline
summaries with bootstrap CIs (``summarize_results``), the paired comparisons of
``lyra_lab.stats`` as report sections and figures, judge agreement, judges' measured error
rates (``judge_error_rates``, ``judged_accuracy``) and judge prompts side by side
(``prompt_accuracy``, ``prompt_differences``), category labels, and
``write_report`` for a run folder's ``report/``, ``compare_runs`` for the pipelines of two run
folders paired on the probes both asked, and ``write_index`` for a page over a folder of runs.  Figures follow ``_legible``'s rules (identical
series drawn once, direct labels, small n marked), and ``figure_problems`` finds what a drawn
figure hides (overlapping text, a legend over data, series drawn but unseen).
"""

from lyra_lab.reports._bench_tables import (
    BENCHMARK_TABLES,
    BenchmarkTable,
    TableError,
    benchmark_table,
    locomo_table,
    longmemeval_table,
)
from lyra_lab.reports._agreement import cohen_kappa, judge_agreement, judge_table, split_judges
from lyra_lab.reports._compare_plots import comparison_plot
from lyra_lab.reports._compare_runs import RunComparison, compare_runs
from lyra_lab.reports._figure_check import FigureProblem, figure_problems
from lyra_lab.reports._labels import DEFAULT_LOCOMO_LABELS, LOCOMO_LABELS, category_label, label_categories
from lyra_lab.reports._legible import (
    SMALL_N,
    Estimate,
    LineLabel,
    SeriesGroup,
    ci_point,
    group_identical,
    group_label,
    is_small,
    label_lines,
    n_phrase,
    shade_small,
    short_labels,
    small_marker,
    small_note,
    spread,
)
from lyra_lab.reports._figures import error_bars, log_axis, stable_colors
from lyra_lab.reports._frames import budget_frame
from lyra_lab.reports._judge_errors import (
    Proportion,
    corrected_accuracy,
    judge_error_rates,
    judged_accuracy,
    rogan_gladen,
    wilson_interval,
)
from lyra_lab.reports._judge_prompts import draw_prompt_figure, prompt_accuracy, prompt_differences
from lyra_lab.reports._planted_report import run_planting_warnings, warning_lines
from lyra_lab.reports._plots import quality_vs_context_tokens
from lyra_lab.reports._compare_report import verdict
from lyra_lab.reports._headline import Headline, run_headline
from lyra_lab.reports._report import WrittenReport, write_report
from lyra_lab.reports._summary import summarize_results
from lyra_lab.reports._view import RunEntry, RunsPage, runs_overview, write_index

__all__ = [
    "Headline",
    "verdict",
    "DEFAULT_LOCOMO_LABELS",
    "run_headline",
    "BenchmarkTable",
    "BENCHMARK_TABLES",
    "TableError",
    "benchmark_table",
    "locomo_table",
    "longmemeval_table",
    "Estimate",
    "FigureProblem",
    "LOCOMO_LABELS",
    "SMALL_N",
    "LineLabel",
    "Proportion",
    "RunComparison",
    "RunEntry",
    "RunsPage",
    "SeriesGroup",
    "WrittenReport",
    "budget_frame",
    "category_label",
    "ci_point",
    "cohen_kappa",
    "compare_runs",
    "run_planting_warnings",
    "warning_lines",
    "corrected_accuracy",
    "draw_prompt_figure",
    "comparison_plot",
    "error_bars",
    "figure_problems",
    "group_identical",
    "group_label",
    "is_small",
    "judge_agreement",
    "judge_error_rates",
    "judge_table",
    "judged_accuracy",
    "label_categories",
    "label_lines",
    "log_axis",
    "n_phrase",
    "prompt_accuracy",
    "prompt_differences",
    "quality_vs_context_tokens",
    "rogan_gladen",
    "runs_overview",
    "shade_small",
    "short_labels",
    "small_marker",
    "small_note",
    "split_judges",
    "spread",
    "stable_colors",
    "summarize_results",
    "wilson_interval",
    "write_index",
    "write_report",
]
