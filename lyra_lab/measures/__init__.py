"""Measures: what a probe's recall, context and answer score, each following a stated rule.

Retrieval over ranked memory entries (``evidence_recall@K``, ``coverage_recall@K``, nDCG,
MRR, LongMemEval's turn- and session-level rules), equal-budget scores over the rendered
context (``answer_in_context@Btok``), QA scoring under named scorers (SQuAD, LoCoMo,
LongMemEval) and LLM judges.  ``score_outcome`` scores one probe outcome of a replay.
"""

from lyra_lab.measures._budget import budget_metric, budget_scores, check_budgets
from lyra_lab.measures._judge import (
    DEFAULT_JUDGE_PROMPT,
    JUDGE_PROMPTS,
    LONGMEMEVAL_JUDGE,
    JudgeConfig,
    JudgePrompt,
    JudgeResult,
    TypedJudgePrompt,
    judge_answer,
    parse_judgement,
)
from lyra_lab.measures._measure import MEASURES, Measure, MeasureInfo, measure_names
from lyra_lab.measures._qa import ANSWER_PROMPTS, DEFAULT_ANSWER_PROMPT, AnswerPrompt, answer_probe, score_answer
from lyra_lab.measures._retrieval import (
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
from lyra_lab.measures._score import check_ks, retrieval_scores, score_outcome, session_map
from lyra_lab.measures._scorers import DEFAULT_SCORER, SCORERS, check_scorer, locomo_f1, locomo_normalize

__all__ = [
    "ANSWER_PROMPTS",
    "DEFAULT_ANSWER_PROMPT",
    "DEFAULT_JUDGE_PROMPT",
    "DEFAULT_SCORER",
    "JUDGE_PROMPTS",
    "LONGMEMEVAL_JUDGE",
    "MEASURES",
    "SCORERS",
    "AnswerPrompt",
    "JudgeConfig",
    "JudgePrompt",
    "JudgeResult",
    "Measure",
    "MeasureInfo",
    "TypedJudgePrompt",
    "answer_probe",
    "any_recall_at",
    "budget_metric",
    "budget_scores",
    "check_budgets",
    "check_ks",
    "check_scorer",
    "coverage_recall_at",
    "evidence_recall_at",
    "judge_answer",
    "locomo_f1",
    "locomo_normalize",
    "measure_names",
    "mrr",
    "ndcg_any_at",
    "ndcg_at",
    "parse_judgement",
    "recall_all_at",
    "relevant_count",
    "retrieval_scores",
    "score_answer",
    "score_outcome",
    "session_map",
    "session_ranking",
    "session_recall_at",
    "to_sessions",
    "turn_groups",
    "verbatim_flags",
]
