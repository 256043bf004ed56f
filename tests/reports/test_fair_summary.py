"""The summary leads with the fair metric, warns when summaries flatter, and plots quality against budget."""

import pandas as pd

from lyra_lab.reports import quality_vs_context_tokens, summarize_results
from lyra_lab.reports._summary import (
    MARKDOWN_METRICS,
    ci_warnings,
    expand_metrics,
    flattery_warnings,
    main_quality_metric,
)

PRESENT = ["mrr", "evidence_recall@1", "evidence_recall@10", "coverage_recall@1", "coverage_recall@10",
           "answer_in_context@256tok", "answer_in_context@1024tok", "answer_in_context@512tok", "qa_f1"]


def test_expand_metrics_patterns():
    assert expand_metrics(PRESENT, ["answer_in_context@Btok"]) == [
        "answer_in_context@256tok", "answer_in_context@512tok", "answer_in_context@1024tok"]
    assert expand_metrics(PRESENT, ["coverage_recall@Kmax"]) == ["coverage_recall@10"]
    assert expand_metrics(PRESENT, ["evidence_recall@K", "mrr", "judge"]) == [
        "evidence_recall@1", "evidence_recall@10", "mrr"]
    # the markdown table leads with the fair columns
    assert expand_metrics(PRESENT, MARKDOWN_METRICS)[:6] == [
        "answer_in_context@256tok", "answer_in_context@512tok", "answer_in_context@1024tok",
        "evidence_recall@1", "evidence_recall@10", "coverage_recall@10"]


def test_main_quality_metric_is_the_fair_one():
    assert main_quality_metric(PRESENT) == "answer_in_context@512tok"  # the middle budget
    assert main_quality_metric(["evidence_recall@5", "coverage_recall@5", "qa_f1"]) == "evidence_recall@5"
    assert main_quality_metric(["recall@5", "recall@10", "mrr"]) == "recall@10"  # a run from before the rename
    assert main_quality_metric(["qa_f1"]) == "qa_f1"


def rows(pipeline, metric, values, conv="c1"):
    return [{"pipeline": pipeline, "conversation_id": conv, "probe_id": f"q{i}", "metric": metric, "value": v}
            for i, v in enumerate(values)]


def flattering_frame():
    # "sum": summaries alone. Over 4 probes: coverage 1.0, evidence 0.0, answer_in_context@1024 = 1/4
    # "raw": raw turns. coverage = evidence = 0.75, answer_in_context@1024 = 0.75
    data = (rows("sum", "coverage_recall@10", [1, 1, 1, 1]) + rows("sum", "evidence_recall@10", [0, 0, 0, 0])
            + rows("sum", "answer_in_context@1024tok", [1, 0, 0, 0]) + rows("sum", "answer_in_context@256tok",
                                                                            [0, 0, 0, 0])
            + rows("raw", "coverage_recall@10", [1, 1, 1, 0]) + rows("raw", "evidence_recall@10", [1, 1, 1, 0])
            + rows("raw", "answer_in_context@1024tok", [1, 1, 0, 1]) + rows("raw", "answer_in_context@256tok",
                                                                            [1, 0, 0, 1]))
    return pd.DataFrame(data)


def test_flattery_warning_names_summary_memories_only():
    (text,) = flattery_warnings(flattering_frame())
    # sum: 1.00 vs 0.25 (gap 0.75 >= 0.2, and 1.00 above evidence 0.00); raw: gap 0.0 -> not named
    assert "sum: 1.00 vs 0.25 (n=4)" in text and "raw" not in text
    assert "answer_in_context@1024tok" in text and "coverage_recall@10" in text
    assert text in ci_warnings(flattering_frame())  # the report shows ci_warnings
    # coverage above answer_in_context but reached verbatim (evidence = coverage): no warning
    honest = flattering_frame()
    honest.loc[(honest.pipeline == "sum") & (honest.metric == "evidence_recall@10"), "value"] = 1.0
    assert flattery_warnings(honest) == []


def test_summary_columns_lead_with_answer_in_context():
    summary = summarize_results(flattering_frame(), n_resamples=50)
    quality = [c for c in summary.columns if c not in ("pipeline", "n_probes") and not c.endswith(
        ("_ci_low", "_ci_high", "_n"))]
    assert quality[:4] == ["answer_in_context@256tok", "answer_in_context@1024tok", "evidence_recall@10",
                           "coverage_recall@10"]
    assert summary.set_index("pipeline").loc["sum", "answer_in_context@1024tok"] == 0.25


def test_quality_vs_context_tokens_plot(tmp_path):
    df = flattering_frame()
    df["pipeline"] = df["pipeline"] + "|dense"
    out = quality_vs_context_tokens(df, "answer_in_context", {}, tmp_path / "budget.png", n_resamples=50)
    assert out == tmp_path / "budget.png" and out.stat().st_size > 5_000
    assert quality_vs_context_tokens(df, "evidence_recall", {}, tmp_path / "none.png") is None  # no @Btok rows


def test_few_values_warning_groups_metric_families():
    df = flattering_frame()
    (few,) = [w for w in ci_warnings(df) if "fewer than" in w]
    # every metric has n=4 per pipeline: one entry per family, its cut-offs joined
    assert "answer_in_context@256/1024tok (n=4)" in few and "coverage_recall@10 (n=4)" in few


def test_a_run_that_answered_leads_its_headline_with_qa():
    from lyra_lab.reports._summary import headline_metric

    # issue 46: a LoCoMo QA run's headline was answer_in_context; its plots and paired tests stay on the fair one
    retrieval = [m for m in PRESENT if m != "qa_f1"]
    assert headline_metric(PRESENT) == "qa_f1" and main_quality_metric(PRESENT) == "answer_in_context@512tok"
    assert headline_metric([*PRESENT, "judge"]) == "judge"
    assert headline_metric([*PRESENT, "judge[b]", "judge[a]"]) == "judge[a]"
    assert headline_metric(retrieval) == main_quality_metric(retrieval) == "answer_in_context@512tok"
