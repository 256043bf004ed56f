"""The summary of a grid with memory systems: query latency percentiles, ingest figures, and "cannot trace"
where a system's hits name no turns (its turn-level figures are absent, never shown as a number)."""

import numpy as np
import pandas as pd

from lyra_lab.reports import summarize_results
from lyra_lab.reports._summary import CANNOT_TRACE, MARKDOWN_METRICS, expand_metrics, format_markdown, turn_level


def probe_rows(pipeline, metric, values, traces=None):
    extra = {} if traces is None else {"traces_turns": traces, "system": pipeline}
    return [{"pipeline": pipeline, "conversation_id": "c1", "probe_id": f"q{i}", "metric": metric, "value": v, **extra}
            for i, v in enumerate(values)]


def frame() -> pd.DataFrame:
    latencies = list(np.linspace(0.001, 0.1, 20))
    rows = (probe_rows("bm25|x", "evidence_recall@10", [1.0, 0.0] * 10)
            + probe_rows("bm25|x", "answer_in_context@512tok", [1.0] * 20)
            + probe_rows("bm25|x", "recall_latency_s", latencies)
            + probe_rows("mcp:untraced", "answer_in_context@512tok", [0.0, 1.0] * 10, traces=False)
            + probe_rows("mcp:untraced", "recall_latency_s", [2 * v for v in latencies], traces=False)
            + [{"pipeline": "mcp:untraced", "conversation_id": "c1", "probe_id": "", "metric": "ingest.s_per_turn",
                "value": 0.25, "traces_turns": False, "system": "mcp:untraced"}])
    return pd.DataFrame(rows)


def test_latency_percentiles_ingest_and_cannot_trace():
    summary = summarize_results(frame(), n_resamples=200).set_index("pipeline")
    latencies = np.linspace(0.001, 0.1, 20)
    assert summary.loc["bm25|x", "recall_latency_p50_s"] == np.percentile(latencies, 50)
    assert summary.loc["mcp:untraced", "recall_latency_p95_s"] == np.percentile(2 * latencies, 95)
    assert summary.loc["mcp:untraced", "recall_latency_p95_s_n"] == 20
    assert summary.loc["mcp:untraced", "ingest.s_per_turn"] == 0.25
    assert pd.isna(summary.loc["mcp:untraced", "evidence_recall@10"])
    assert bool(summary.loc["bm25|x", "traces_turns"]) and not bool(summary.loc["mcp:untraced", "traces_turns"])

    table = summarize_results(frame(), n_resamples=200)
    markdown = format_markdown(table, ["pipeline"], expand_metrics(list(table.columns), MARKDOWN_METRICS))
    header, bm25, mcp = [[c.strip(" |") for c in line.split(" | ")] for line in markdown.splitlines() if "|x" in line or "untraced" in line
                         or line.startswith("| pipeline")]
    column = header.index("evidence_recall@10")
    assert mcp[column] == CANNOT_TRACE and bm25[column].startswith("0.500 [")
    assert mcp[header.index("answer_in_context@512tok")].startswith("0.500 [")  # what it can be scored on, it is
    assert "recall_latency_p95_s" in header and "ingest.s_per_turn" in header


def test_turn_level_names():
    assert all(turn_level(m) for m in ("evidence_recall@10", "mrr", "ndcg@5", "session_recall_any@5",
                                       "coverage_recall@512tok", "recall@10"))
    assert not any(turn_level(m) for m in ("answer_in_context@512tok", "retention", "qa_f1", "judge",
                                           "context_tokens", "recall_latency_s"))
