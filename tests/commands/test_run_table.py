"""The console table of `lyra-lab run` / `demo`: each mean beside the n it was computed over."""

import pandas as pd

from lyra_lab.commands.run import compact_table


def test_each_mean_carries_its_own_n():
    summary = pd.DataFrame({"pipeline": ["a|bm25"], "n_probes": [13], "answer_in_context@512tok": [0.857142],
                            "answer_in_context@512tok_n": [7], "qa_f1": [0.5], "qa_f1_n": [3],
                            "summarize.latency_p50_s": [2.25], "summarize.latency_p50_s_n": [1],
                            "mrr": [float("nan")], "mrr_n": [0]})
    lines = compact_table(summary).splitlines()
    header, row = lines[0].split(), lines[1]
    assert header == ["pipeline", "n_probes", "answer_in_context@512tok", "mrr", "qa_f1", "summarize.latency_p50_s"]
    # 13 probes asked, quality over the 7 with an answer, QA over 3, latency over 1 conversation
    assert "13" in row and "0.857 n=7" in row and "0.500 n=3" in row and "2.250 n=1" in row
    assert "nan" not in row.lower()  # a metric with no value shows nothing, not "nan n=0"
