"""Names that moved, still importable from their old homes for one release, with a ``DeprecationWarning``.

A notebook or script written against an earlier lyra-lab keeps working after an
upgrade and says where each name went: ``from lyra_lab.experiments import
load_results`` warns "lyra_lab.experiments.load_results moved to
lyra_lab.runs.load_results" and returns that very function.  A package lists
its moved names in ``MOVED`` (its old home's module name → name → new home, or
``"new home:new name"`` for a name that was renamed) and
gets them with one line, ``__getattr__ = moved_names(__name__)``: Python calls a
module's ``__getattr__`` only for names the module itself lacks, so nothing
current is slowed or shadowed.  Names that were removed, not moved, raise the
``ImportError`` that says what to use instead (``GONE``).

Every move of the last two rounds (the releases of 2026-11-25 and 2026-11-26)
is here; ``CHANGELOG.md`` lists them, and ``tests/docs/test_moved_names.py``
imports each from its old home.  Drop an entry one release after it was added.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any, Callable

_MEASURES = "lyra_lab.measures"
_MATCHING = "lyra_lab.matching"
_REPORTS = "lyra_lab.reports"
_STATS = "lyra_lab.stats"
_RUNS = "lyra_lab.runs"
_EXPERIMENTS = "lyra_lab.experiments"



#: ``lyra_lab.evaluate`` (86 public names) was split into measures, stats, reports and runs (2026-11-26)
_EVALUATE: dict[str, str] = {
    **dict.fromkeys(("ABSTAIN_PATTERNS", "DEFAULT_RETENTION_THRESHOLD", "abstains", "answer_retained",
                     "exact_match", "expects_abstention", "normalize_answer", "token_f1"), _MATCHING),
    **dict.fromkeys(("ANSWER_PROMPTS", "DEFAULT_ANSWER_PROMPT", "DEFAULT_JUDGE_PROMPT", "DEFAULT_SCORER",
                     "JUDGE_PROMPTS", "LONGMEMEVAL_JUDGE", "SCORERS", "AnswerPrompt", "JudgeConfig",
                     "JudgePrompt", "JudgeResult", "TypedJudgePrompt", "answer_probe", "any_recall_at",
                     "budget_metric", "budget_scores", "check_ks", "check_scorer", "coverage_recall_at",
                     "evidence_recall_at", "judge_answer", "locomo_f1", "locomo_normalize", "mrr",
                     "ndcg_any_at", "ndcg_at", "parse_judgement", "recall_all_at", "relevant_count",
                     "retention_scores", "retrieval_scores", "score_answer", "session_map", "session_ranking",
                     "session_recall_at", "to_sessions", "turn_groups", "verbatim_flags"), _MEASURES),
    **dict.fromkeys(("BootstrapCI", "PairedComparison", "aggregate", "bootstrap_ci", "cluster_bootstrap_ci",
                     "compare", "compare_all", "holm", "row_pipeline_labels", "sign_flip_p"), _STATS),
    **dict.fromkeys(("LOCOMO_LABELS", "budget_frame", "category_label", "cohen_kappa", "comparison_plot",
                     "judge_agreement", "judge_table", "label_categories", "quality_vs_context_tokens",
                     "split_judges", "summarize_results", "write_report"), _REPORTS),
    **dict.fromkeys(("DETAIL_EVENT", "LoggedProbes", "ResultsFormatError", "logged_probes", "run_corpus",
                     "turn_texts"), _RUNS),
    **dict.fromkeys(("ProbeRecall", "RecallEvalResult", "raw_turn_pipeline", "skip_reason"), _EXPERIMENTS),
    "VERBATIM_KINDS": "lyra_lab.memory",
    "probe_record": "lyra_lab.probes",
}

#: ``lyra_lab.experiments``' names that said "plan" for what is not ``lyra-lab plan``'s forecast (2026-11-28):
#: renamed in place, ``"home:new name"``
_PLAN_RENAMED: dict[str, str] = {old: f"{_EXPERIMENTS}:{new}" for old, new in (
    ("CellPlan", "CellSetup"), ("AnswerPlan", "AnswerSetup"), ("cell_plan", "cell_setup"), ("plan_cells", "grid_cells"))}

#: old home → name → new home (``"home:new name"`` when the name changed too)
MOVED: dict[str, dict[str, str]] = {
    "lyra_lab.evaluate": _EVALUATE,
    _EXPERIMENTS: {**dict.fromkeys(("RunFolder", "environment", "file_sha256", "load_results", "schema_version"),
                                   _RUNS), **_PLAN_RENAMED},
    "lyra_lab.replay": dict.fromkeys(("NullLog", "RunLog", "read_log"), _RUNS),
    _MATCHING: {"retention_scores": _MEASURES},
}

#: old home → name → what to use instead (removed, not moved: no object to hand back)
GONE: dict[str, dict[str, str]] = {
    "lyra_lab.evaluate": {
        "fit_count": "lyra_lab.memory.fit_context(entries, budget, count).whole",
        "probe_recall": "lyra_lab.experiments.recall_result(run_dir).per_probe (ProbeRecall records)",
        "read_results": "lyra_lab.runs.load_results(run_dir)",
        "read_row_records": "lyra_lab.runs.load_results(run_dir) (a run folder's rows as one frame)",
        "recall_eval": "lyra_lab.experiments.run_recall_eval(corpus_spec, recaller, ...)",
        "score_outcome": "lyra_lab.measures.score_recall(outcome, scoring, session_of)",
    },
    _EXPERIMENTS: {"JudgeSpec": "the [qa] judges table (lyra_lab.measures.JudgeConfig)"},
    "lyra_lab.recall": {
        "RankedHits": "BaseRecaller.ranking (a recaller's rankings) and lyra_lab.recall.Hit",
        "forget_queries": "lyra_lab.recall.Query (a per-probe memo travels with each query)",
    },
}


def new_home(entry: str, name: str) -> tuple[str, str]:
    """A ``MOVED`` entry as (new home, new name): ``"lyra_lab.runs"`` keeps the name, ``"home:new"`` renames it."""
    home, _, new_name = entry.partition(":")
    return home, new_name or name


def moved_names(module: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` handing out ``module``'s moved names with a ``DeprecationWarning``."""
    moved = MOVED.get(module, {})
    gone = GONE.get(module, {})

    def __getattr__(name: str) -> Any:  # noqa: N807 - the module hook's own name
        if name in moved:
            new, new_name = new_home(moved[name], name)
            warnings.warn(f"{module}.{name} moved to {new}.{new_name}; import it from {new} "
                          f"(the old name goes in the next release)", DeprecationWarning, stacklevel=2)
            return getattr(importlib.import_module(new), new_name)
        if name in gone:
            # ImportError, not AttributeError: ``from m import name`` would turn the latter into its
            # generic "cannot import name", losing what to use instead
            raise ImportError(f"{module}.{name} was removed; use {gone[name]} instead", name=module)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__


def moved_count() -> int:
    """How many names ``MOVED`` keeps importable from an old home."""
    return sum(len(names) for names in MOVED.values())
