"""write_report from a small hand-made results frame; the report command."""

import argparse
import json

import pandas as pd
import pytest

from lyra_lab.runs import CellRows, RunFolder, load_results
from lyra_lab.reports import write_report
from lyra_lab.reports._figures import wrap_label

P1 = "token_budget+single_pass+none|dense"
P2 = "turn_window+map_reduce+time_ladder|bm25"


def rows():
    out = []

    def row(pipeline, conv, probe, category, metric, value, simulated=False):
        out.append({"run": "r", "cell_id": f"{pipeline}:{conv}", "pipeline": pipeline, "chunker": "x",
                    "summarizer": "y", "rollup": "none", "recaller": pipeline.split("|")[1],
                    "backend": "fake", "embedder": "hashing-256", "seed": 0, "corpus": "tiny",
                    "conversation_id": conv, "probe_id": probe, "category": category,
                    "metric": metric, "value": value, "simulated": simulated})

    # P1: evidence_recall@5 over 4 probes = (1 + 0.5 + 0 + 1) / 4 = 0.625; mrr = (1 + 1/2 + 0 + 1/3) / 4 = 0.4583
    for probe, cat, r, m, f1, lat in [("q1", "1", 1.0, 1.0, 1.0, 0.1), ("q2", "2", 0.5, 0.5, 0.5, 0.2),
                                      ("q3", "1", 0.0, 0.0, 0.0, 0.3), ("q4", "2", 1.0, 1 / 3, 1.0, 0.4)]:
        conv = "c1" if probe in ("q1", "q2") else "c2"
        row(P1, conv, probe, cat, "evidence_recall@5", r)
        row(P1, conv, probe, cat, "mrr", m)
        row(P1, conv, probe, cat, "qa_f1", f1)
        row(P1, conv, probe, cat, "recall_latency_s", lat)
        row(P1, conv, probe, cat, "context_tokens", 100.0)
    # P2 (simulated backend): evidence_recall@5 = (0 + 0 + 1 + 0) / 4 = 0.25
    for probe, cat, r in [("q1", "1", 0.0), ("q2", "2", 0.0), ("q3", "1", 1.0), ("q4", "2", 0.0)]:
        conv = "c1" if probe in ("q1", "q2") else "c2"
        row(P2, conv, probe, cat, "evidence_recall@5", r, True)
        row(P2, conv, probe, cat, "mrr", r, True)
        row(P2, conv, probe, cat, "recall_latency_s", 0.05, True)
        row(P2, conv, probe, cat, "context_tokens", 300.0, True)
    # conversation-level rows: P1 summarize cost 0.01 and 0.03 per conversation -> mean 0.02
    for pipeline, costs, sim in [(P1, (0.01, 0.03), False), (P2, (0.0, 0.0), True)]:
        for conv, cost in zip(("c1", "c2"), costs):
            row(pipeline, conv, "", "", "summarize.cost_usd", cost, sim)
            row(pipeline, conv, "", "", "summarize.latency_s", 2.0, sim)
            row(pipeline, conv, "", "", "summarize.latency_p95_s", 1.5, sim)
            row(pipeline, conv, "", "", "summarize.prompt_tokens", 1000.0, sim)
    return out


def write_rows(run_dir, records):
    folder = RunFolder(run_dir)
    folder.prepare()
    by_cell = {}
    for r in records:
        by_cell.setdefault(r["cell_id"], []).append(r)
    for i, cell in enumerate(by_cell.values()):
        folder.write_rows(f"cell{i}", CellRows.from_records(cell))


def test_report_from_rows(tmp_path):
    write_rows(tmp_path, rows())
    paths = write_report(tmp_path, n_resamples=200)
    names = {p.name for p in paths}
    assert names == {"summary.csv", "metrics.csv", "by_category.csv", "paired_comparisons.csv", "summary.md",
                     "quality_vs_cost.png", "by_category.png", "latency.png", "paired_differences.png", "frontier.png",
                     "report.html"}
    for p in paths:
        assert p.exists() and p.stat().st_size > 0 and p.parent == tmp_path / "report"
    summary = pd.read_csv(tmp_path / "report" / "summary.csv").set_index("pipeline")
    assert sorted(summary.index) == sorted([P1, P2])  # one row per pipeline
    assert summary.loc[P1, "evidence_recall@5"] == pytest.approx(0.625)
    assert summary.loc[P2, "evidence_recall@5"] == pytest.approx(0.25)
    assert summary.loc[P1, "mrr"] == pytest.approx((1 + 0.5 + 0 + 1 / 3) / 4)
    assert summary.loc[P1, "evidence_recall@5_ci_low"] <= 0.625 <= summary.loc[P1, "evidence_recall@5_ci_high"]
    assert summary.loc[P1, "qa_f1"] == pytest.approx(0.625)
    assert summary.loc[P1, "summarize.cost_usd"] == pytest.approx(0.02)
    assert summary.loc[P1, "context_tokens"] == 100 and summary.loc[P2, "context_tokens"] == 300
    assert summary.loc[P1, "n_probes"] == 4
    assert bool(summary.loc[P2, "simulated"]) and not bool(summary.loc[P1, "simulated"])
    md = (tmp_path / "report" / "summary.md").read_text()
    assert "0.625 [" in md and "(simulated)" in md and "by probe category" in md
    # per category: P1 category "1" = (q1 1.0 + q3 0.0) / 2 = 0.5; category "2" = (0.5 + 1) / 2 = 0.75
    by_cat = pd.read_csv(tmp_path / "report" / "by_category.csv", dtype={"category": str})
    p1 = by_cat[by_cat.pipeline == P1].set_index("category")["mean"]
    assert p1.to_dict() == pytest.approx({"1": 0.5, "2": 0.75})


def test_report_labels_categories(tmp_path):
    write_rows(tmp_path, rows())
    write_report(tmp_path, category_scheme="locomo_paper", n_resamples=100)
    by_cat = pd.read_csv(tmp_path / "report" / "by_category.csv")
    assert set(by_cat["category_label"]) == {"1 multi-hop", "2 temporal"}


def test_report_errors_name_the_folder_or_the_line(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such run folder"):
        write_report(tmp_path / "missing")
    write_rows(tmp_path, rows()[:3])
    path = tmp_path / "rows" / "cell0.jsonl"
    path.write_text(path.read_text() + "{oops\n")
    with pytest.raises(ValueError, match=r"cell0\.jsonl: line 3"):
        write_report(tmp_path)


def test_wrap_label_breaks_long_pipeline_names():
    wrapped = wrap_label("token_budget+map_reduce+time_ladder|hybrid", width=20)
    assert wrapped.replace("\n", "") == "token_budget+map_reduce+time_ladder|hybrid"
    assert all(len(line) <= 20 for line in wrapped.split("\n"))


def test_report_command(tmp_path, capsys):
    from lyra_lab.commands import report

    write_rows(tmp_path, rows())
    parser = argparse.ArgumentParser()
    report.add_parser(parser.add_subparsers())
    args = parser.parse_args(["report", str(tmp_path), "--resamples", "50"])
    assert report.run(args) == 0
    out = capsys.readouterr().out  # the headline and where the files are; the tables are in summary.md
    assert len(out.splitlines()) <= 25 and f"1. {P1}" in out and "report.html" in out and "summary.md" in out
    assert "CSV tables" in out and "figures" in out and P1.replace("|", "\\|") in (tmp_path / "report" / "summary.md").read_text()


def test_report_separates_backends(tmp_path):
    from lyra_lab.reports._report import _plot_labels

    records = rows()
    other = [dict(r, backend="other", cell_id=r["cell_id"] + "#2") for r in records if r["pipeline"] == P1]
    for r in other:
        if r["metric"] == "evidence_recall@5":
            r["value"] = 0.0
    write_rows(tmp_path, records + other)
    write_report(tmp_path, n_resamples=50)
    summary = pd.read_csv(tmp_path / "report" / "summary.csv")
    p1 = summary[summary.pipeline == P1].set_index("backend")
    # one row per pipeline × backend: the second backend's recall is 0
    assert len(summary) == 3 and p1.loc["fake", "evidence_recall@5"] == pytest.approx(0.625) and p1.loc["other", "evidence_recall@5"] == 0
    labels = set(_plot_labels(load_results(tmp_path), ["pipeline", "backend", "embedder"])["pipeline"])
    assert f"{P1}|backend=other" in labels and f"{P2}|backend=fake" in labels


def test_report_cluster_bootstrap(tmp_path):
    write_rows(tmp_path, rows())
    write_report(tmp_path, n_resamples=200, cluster="conversation_id")
    summary = pd.read_csv(tmp_path / "report" / "summary.csv").set_index("pipeline")
    # P2 evidence_recall@5 by conversation: c1 (q1 0, q2 0) -> sum 0 of 2; c2 (q3 1, q4 0) -> 1 of 2.
    # Resampling the two conversations gives means 0/4, 1/4 or 2/4 -> the interval is [0, 0.5]
    assert summary.loc[P2, "evidence_recall@5"] == pytest.approx(0.25)
    assert (summary.loc[P2, "evidence_recall@5_ci_low"], summary.loc[P2, "evidence_recall@5_ci_high"]) == (0.0, 0.5)
    assert "resampling whole conversation_id clusters" in (tmp_path / "report" / "summary.md").read_text()
    from lyra_lab.runs import ResultsFormatError

    with pytest.raises(ResultsFormatError, match="cannot cluster"):
        write_report(tmp_path, cluster="nope")


def test_category_matrix_holds_the_per_category_means():
    from lyra_lab.stats import aggregate
    from lyra_lab.reports._category_plot import category_matrix

    part = pd.DataFrame(rows())
    agg = aggregate(part[part["metric"] == "evidence_recall@5"], by=["pipeline", "category"])
    table = category_matrix(agg, "category")
    # P1: category 1 = (1 + 0) / 2 = 0.5, category 2 = (0.5 + 1) / 2 = 0.75
    # P2: category 1 = (0 + 1) / 2 = 0.5, category 2 = (0 + 0) / 2 = 0.0
    assert list(table.index) == sorted([P1, P2]) and list(table.columns) == ["1", "2"]
    assert table.loc[P1].tolist() == [0.5, 0.75] and table.loc[P2].tolist() == [0.5, 0.0]


def _drawn(monkeypatch, module):
    """Figures ``module`` saves, kept instead of written."""
    seen = []
    monkeypatch.setattr(module, "save", lambda fig, path: seen.append(fig) or path)
    return seen


def test_by_category_gives_identical_pipelines_one_row_and_hatches_small_cells(tmp_path, monkeypatch):
    from matplotlib.patches import Rectangle

    from lyra_lab.reports import _category_plot

    seen = _drawn(monkeypatch, _category_plot)
    base = pd.DataFrame(rows())
    twins = pd.concat([base[base["pipeline"] == P1].assign(pipeline=P1.replace("token_budget", name))
                       for name in ("token_budget", "turn_window")])
    _category_plot.by_category(pd.concat([twins, base[base["pipeline"] == P2]]), "evidence_recall@5", "category",
                               {}, tmp_path / "c.png")
    ax = seen[0].axes[0]
    labels = [t.get_text().replace("\n", "") for t in ax.get_yticklabels()]
    # the two identical pipelines share one row, named as a group; P2 has its own
    assert len(labels) == 2 and any("×2" in label for label in labels)
    # every cell rests on 2 probes (< 10): each of the 2 × 2 cells is hatched, and says n=2 without a CI
    hatched = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_hatch()]
    assert len(hatched) == 4
    cells = [t.get_text() for t in ax.texts]
    assert len(cells) == 4 and all(c.endswith("n=2") and "[" not in c for c in cells)


def test_by_category_writes_a_png(tmp_path):
    from lyra_lab.reports._category_plot import by_category

    out = by_category(pd.DataFrame(rows()), "evidence_recall@5", "category", {P2: True}, tmp_path / "heat.png")
    assert out.stat().st_size > 1000


def test_report_leaves_matplotlib_global_state_alone(tmp_path):
    import matplotlib

    write_rows(tmp_path, rows())
    before = matplotlib.get_backend()
    matplotlib.use("svg")  # not Agg, so a switch to Agg would show
    try:
        params = dict(matplotlib.rcParams)
        write_report(tmp_path, n_resamples=50)
        assert matplotlib.get_backend() == "svg"
        assert dict(matplotlib.rcParams) == params
    finally:
        matplotlib.use(before)


def test_each_metric_has_its_own_n_in_every_table(tmp_path):
    records = [r for r in rows() if not (r["metric"] == "qa_f1" and r["probe_id"] == "q4")]  # QA on 3 probes
    write_rows(tmp_path, records)
    write_report(tmp_path, n_resamples=50)
    summary = pd.read_csv(tmp_path / "report" / "summary.csv").set_index("pipeline")
    assert summary.loc[P1, "evidence_recall@5_n"] == 4 and summary.loc[P1, "qa_f1_n"] == 3
    md = (tmp_path / "report" / "summary.md").read_text()
    assert "0.625 [" in md and "] n=4" in md and "] n=3" in md
    assert "n=2" in md.split("by probe category")[1]  # 2 probes per category
    # the category table says what its figures rest on
    assert "categories as the dataset names them" in md and "QA scorer: " in md and "judge: none." in md


def test_ci_warnings_one_cluster_and_few_probes(tmp_path, capsys):
    records = [dict(r, conversation_id="c1") for r in rows()]
    write_rows(tmp_path, records)
    write_report(tmp_path, n_resamples=50, cluster="conversation_id")
    err = capsys.readouterr().err
    md = (tmp_path / "report" / "summary.md").read_text()
    for text in (" ".join(err.split()), md):  # the terminal's lines are wrapped at 100 columns
        assert "only one conversation_id" in text and "zero width" in text
        assert "fewer than 10 probes" in text and "evidence_recall@5 (n=4)" in text


def test_no_ci_warning_with_many_probes_and_clusters():
    from lyra_lab.reports._summary import ci_warnings

    df = pd.DataFrame([{"pipeline": "p", "conversation_id": f"c{i % 3}", "probe_id": f"q{i}", "metric": "evidence_recall@5",
                        "value": float(i % 2)} for i in range(30)])
    assert ci_warnings(df, cluster="conversation_id") == []
    assert len(ci_warnings(df.head(5))) == 1


def test_aliases_from_spec_json_are_noted(tmp_path):
    write_rows(tmp_path, rows())
    alias = {"pipeline": "a+single_pass+none", "same_as": "b+single_pass+none", "because": ["chunker unused"]}
    (tmp_path / "spec.json").write_text(json.dumps({"aliases": [alias]}))
    write_report(tmp_path, n_resamples=50)
    md = (tmp_path / "report" / "summary.md").read_text()
    assert "`a+single_pass+none` = `b+single_pass+none` (chunker unused)" in md


def test_quality_vs_cost_draws_identical_memories_once_on_their_data_values(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    from lyra_lab.reports import _plots

    seen = _drawn(monkeypatch, _plots)
    df = pd.DataFrame(rows())
    twin = df[df["pipeline"] == P1].assign(pipeline=P1.replace("token_budget", "turn_window"))
    _plots.quality_vs_cost(pd.concat([df, twin]), "evidence_recall@5", {}, tmp_path / "q.png")
    fig = seen[0]
    assert isinstance(fig, Figure)
    dense = next(ax for ax in fig.axes if ax.get_title() == "recaller: dense")
    rows_shown = [t.get_text() for t in fig.axes[0].get_yticklabels()]  # the panels share their rows
    # P1 and its twin build memories with the same cost and results: one row, named as a group (×2)
    assert len(rows_shown) == 2 and sum("×2" in r for r in rows_shown) == 1
    points = [float(x) for line in dense.lines if line.get_marker() == "o" for x in line.get_xdata()]
    assert points == [pytest.approx(0.625)]  # the dense panel: P1's exact mean, drawn once, never jittered


def test_report_paired_comparisons_section(tmp_path):
    """Lead metric = the summary's first quality column, evidence_recall@5.  Best P1 (0.625) vs P2 (0.25).

    P2 − P1 per probe: q1 0−1 = −1, q2 0−0.5 = −0.5, q3 1−0 = +1, q4 0−1 = −1 → mean −1.5/4 = −0.375.
    Conversation sums: c1 = −1.5, c2 = 0 → every sign pattern reaches |1.5| → p = 1 (one comparison:
    Holm leaves it at 1), so P2 is not significantly worse; 4 probes in 2 conversations.
    """
    write_rows(tmp_path, rows())
    write_report(tmp_path, n_resamples=200)
    table = pd.read_csv(tmp_path / "report" / "paired_comparisons.csv").set_index("pipeline")
    assert table["metric"].unique().tolist() == ["evidence_recall@5"] and table["best"].unique().tolist() == [P1]
    assert table.loc[P2, "difference"] == pytest.approx(-0.375)
    assert table.loc[P2, "p_value"] == 1.0 and table.loc[P2, "p_holm"] == 1.0
    assert bool(table.loc[P2, "not_worse_than_best"])
    assert (table.loc[P2, "n_probes"], table.loc[P2, "n_clusters"]) == (4, 2)
    md = (tmp_path / "report" / "summary.md").read_text()
    section = md.split("## Paired comparisons: evidence_recall@5")[1].split("\n## ")[0]
    assert "resampling whole conversations (not adjusted" in section and "Holm-adjusted over 1 comparison" in section
    assert "smallest possible p is 2/2^2 = 0.5" in section
    p2_line = next(line for line in section.splitlines() if line.startswith("| " + P2.replace("|", "\\|")))
    # p = 1: not worse by the test; the words say whether the (unadjusted) CI alone excludes 0
    low, high = table.loc[P2, "ci_low"], table.loc[P2, "ci_high"]
    assert low <= -0.375 <= high
    verdict = "not shown worse (n too small)" if high < 0 else "no difference shown"
    assert "| -0.375 |" in p2_line and f"| 1 | {verdict} | 4 | 2 |" in p2_line
    assert "\"not shown worse (n too small)\" = the CI excludes 0 but the adjusted p does not reach α" in section
    page = (tmp_path / "report" / "report.html").read_text()
    assert "<h2 id=paired>Paired comparisons: evidence_recall@5</h2>" in page and "-0.375" in page


def test_report_paired_section_with_one_pipeline(tmp_path):
    write_rows(tmp_path, [r for r in rows() if r["pipeline"] == P1])
    paths = write_report(tmp_path, n_resamples=50)
    assert not {"paired_comparisons.csv", "paired_differences.png"} & {p.name for p in paths}
    md = (tmp_path / "report" / "summary.md").read_text()
    assert f"Only one pipeline ({P1}) in this run: nothing to compare." in md
    assert "Only one pipeline" in (tmp_path / "report" / "report.html").read_text()


def test_report_paired_section_follows_the_summary_order(tmp_path):
    from lyra_lab.reports._compare_report import lead_metric

    summary = pd.DataFrame({"pipeline": ["a"], "n_probes": [2], "context_tokens": [3.0], "qa_f1": [0.5],
                            "qa_f1_ci_low": [0.4], "evidence_recall@5": [0.5], "evidence_recall@5_ci_low": [0.1]})
    df = pd.DataFrame({"probe_id": ["q", "q", "q", ""], "metric": ["context_tokens", "qa_f1", "evidence_recall@5", "x"]})
    assert lead_metric(summary, df) == "qa_f1"  # first column with a CI that is scored per probe
    assert lead_metric(summary, df[df["metric"] != "qa_f1"]) == "evidence_recall@5"


def test_report_paired_section_on_one_conversation_uses_probes(tmp_path):
    """All rows in c1: the section pairs probes as units.  P2 − P1 per probe: −1, −0.5, +1, −1 (sum −1.5).

    Sign flips of (1, 0.5, 1, 1): the three 1s sum to ±3 (2 patterns) or ±1 (6 patterns).
    ±3 ± 0.5 always reaches 1.5 (2 × 2 = 4); ±1 ± 0.5 reaches it with one of the two half signs (6).
    p = 10 / 16 = 0.625.
    """
    write_rows(tmp_path, [dict(r, conversation_id="c1") for r in rows()])
    write_report(tmp_path, n_resamples=100, cluster="conversation_id")
    table = pd.read_csv(tmp_path / "report" / "paired_comparisons.csv").set_index("pipeline")
    assert table.loc[P2, "p_value"] == pytest.approx(10 / 16)
    assert (table.loc[P2, "n_probes"], table.loc[P2, "n_clusters"]) == (4, 4)
    md = (tmp_path / "report" / "summary.md").read_text()
    assert "All probes come from one conversation ('c1'), so each probe is a unit here" in md
