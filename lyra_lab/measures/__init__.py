"""Measures: what a probe's recall, context and answer score, each following a stated rule.

Retrieval over ranked memory entries (``evidence_recall@K``, ``coverage_recall@K``, nDCG,
MRR, LongMemEval's turn- and session-level rules), equal-budget scores over the rendered
context (``answer_in_context@Btok``), QA scoring under named scorers (SQuAD, LoCoMo,
LongMemEval) and LLM judges.  ``score_recall`` scores one probe's recall (a replay's
``ProbeOutcome``, or an external memory system's) while the memory is as the probe found it.
"""

from lyra_lab.measures._budget import budget_metric, budget_scores, check_budgets
from lyra_lab.measures._inputs import MemoryFacts, RankedEntries, Recalled
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
    SessionScores,
    longmemeval_session_scores,
    recall_all_at,
    relevant_count,
    session_ranking,
    session_recall_at,
    to_sessions,
    turn_groups,
    verbatim_flags,
    widened_cutoff,
)
from lyra_lab.measures._score import (
    Scoring,
    answer_scores,
    check_ks,
    retention_scores,
    retrieval_scores,
    score_recall,
    session_map,
    session_scores,
)
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
    "MemoryFacts",
    "RankedEntries",
    "Recalled",
    "Scoring",
    "SessionScores",
    "TypedJudgePrompt",
    "answer_probe",
    "answer_scores",
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
    "longmemeval_session_scores",
    "measure_names",
    "mrr",
    "ndcg_any_at",
    "ndcg_at",
    "parse_judgement",
    "recall_all_at",
    "relevant_count",
    "retention_scores",
    "retrieval_scores",
    "score_answer",
    "score_recall",
    "session_map",
    "session_ranking",
    "session_recall_at",
    "session_scores",
    "to_sessions",
    "turn_groups",
    "verbatim_flags",
    "widened_cutoff",
]
