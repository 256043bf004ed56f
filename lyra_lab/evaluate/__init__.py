"""Evaluation: retrieval metrics, QA scoring, judge, retention, bootstrap CIs, reports, recall-eval."""

from lyra_lab.evaluate._bootstrap import BootstrapCI, aggregate, bootstrap_ci, cluster_bootstrap_ci
from lyra_lab.evaluate._budget import budget_frame, budget_metric, budget_scores, fit_count
from lyra_lab.evaluate._compare import (
    PairedComparison,
    compare,
    compare_all,
    holm,
    row_pipeline_labels,
    sign_flip_p,
)
from lyra_lab.evaluate._compare_plots import comparison_plot
from lyra_lab.evaluate._judge import (
    DEFAULT_JUDGE_PROMPT,
    JUDGE_PROMPTS,
    LONGMEMEVAL_JUDGE,
    JudgePrompt,
    JudgeResult,
    TypedJudgePrompt,
    judge_answer,
    parse_judgement,
)
from lyra_lab.evaluate._labels import LOCOMO_LABELS, category_label, label_categories
from lyra_lab.evaluate._plots import quality_vs_context_tokens
from lyra_lab.evaluate._qa import (
    ABSTAIN_PATTERNS,
    ANSWER_PROMPTS,
    DEFAULT_ANSWER_PROMPT,
    AnswerPrompt,
    abstains,
    answer_probe,
    exact_match,
    expects_abstention,
    normalize_answer,
    score_answer,
    token_f1,
)
from lyra_lab.evaluate._recall_eval import ProbeRecall, RecallEvalResult, recall_eval
from lyra_lab.evaluate._report import ResultsFormatError, read_results, write_report
from lyra_lab.evaluate._retention import (
    DEFAULT_RETENTION_THRESHOLD,
    answer_retained,
    retention_scores,
)
from lyra_lab.evaluate._retrieval import (
    VERBATIM_KINDS,
    any_recall_at,
    coverage_recall_at,
    evidence_recall_at,
    mrr,
    ndcg_any_at,
    ndcg_at,
    recall_all_at,
    relevant_count,
    session_ranking,
    session_recall_at,
    to_sessions,
    turn_groups,
    verbatim_flags,
)
from lyra_lab.evaluate._score import check_ks, retrieval_scores, score_outcome, session_map
from lyra_lab.evaluate._scorers import DEFAULT_SCORER, SCORERS, locomo_f1, locomo_normalize
from lyra_lab.evaluate._summary import summarize_results

__all__ = [
    "ABSTAIN_PATTERNS",
    "ANSWER_PROMPTS",
    "DEFAULT_ANSWER_PROMPT",
    "DEFAULT_JUDGE_PROMPT",
    "DEFAULT_RETENTION_THRESHOLD",
    "DEFAULT_SCORER",
    "JUDGE_PROMPTS",
    "LOCOMO_LABELS",
    "LONGMEMEVAL_JUDGE",
    "SCORERS",
    "VERBATIM_KINDS",
    "AnswerPrompt",
    "BootstrapCI",
    "PairedComparison",  # paired comparisons (_compare)
    "compare",
    "compare_all",
    "comparison_plot",
    "holm",
    "row_pipeline_labels",
    "sign_flip_p",
    "JudgePrompt",
    "JudgeResult",
    "ProbeRecall",
    "RecallEvalResult",
    "ResultsFormatError",
    "TypedJudgePrompt",
    "abstains",
    "aggregate",
    "answer_probe",
    "answer_retained",
    "any_recall_at",
    "bootstrap_ci",
    "budget_frame",
    "budget_metric",
    "budget_scores",
    "category_label",
    "check_ks",
    "cluster_bootstrap_ci",
    "coverage_recall_at",
    "evidence_recall_at",
    "exact_match",
    "expects_abstention",
    "fit_count",
    "judge_answer",
    "label_categories",
    "locomo_f1",
    "locomo_normalize",
    "mrr",
    "ndcg_any_at",
    "ndcg_at",
    "normalize_answer",
    "parse_judgement",
    "quality_vs_context_tokens",
    "read_results",
    "recall_all_at",
    "recall_eval",
    "relevant_count",
    "retention_scores",
    "retrieval_scores",
    "score_answer",
    "score_outcome",
    "session_map",
    "session_ranking",
    "session_recall_at",
    "summarize_results",
    "to_sessions",
    "token_f1",
    "turn_groups",
    "verbatim_flags",
    "write_report",
]

# Judge variance and the per-probe inspector (issue 10).
from lyra_lab.evaluate._agreement import cohen_kappa, judge_agreement, judge_table, split_judges  # noqa: E402
from lyra_lab.evaluate._inspect import HitView, PipelineView, ProbeView, inspect_probe  # noqa: E402
from lyra_lab.evaluate._judge import JudgeConfig  # noqa: E402

__all__ += ["HitView", "JudgeConfig", "PipelineView", "ProbeView", "cohen_kappa", "inspect_probe", "judge_agreement",
            "judge_table", "split_judges"]
