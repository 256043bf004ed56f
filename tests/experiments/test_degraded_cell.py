"""The acceptance test of "degradation is data" (issue 26): a fault script makes one chunk call fail every
attempt, and the degraded cell is flagged in ``results.parquet``, ``summary.md``, ``report.html`` and in
``lyra-lab compare``'s warning; a resume re-runs that cell, paying only the calls that failed, and its rows
then equal a fault-free run's.

The grid runs on the simulated server; its fault rule strikes the map_reduce chunk call whose transcript
holds one turn of conversation 0 (and not the merge that quotes its summary), on every attempt.
"""

from __future__ import annotations

import textwrap

import pandas as pd
import pytest

from lyra_lab.backends import SimulatedServer
from lyra_lab.experiments import ExperimentSpec, RunOptions, run_experiment
from lyra_lab.runs import load_results, read_log
from lyra_lab.synthetic import generate_synthetic

MERGE = "Combine the summaries above"
BACKEND = "max_attempts = 3, retry_base_s = 0.01, retry_max_s = 0.02, timeout_s = 2"


def grid_toml(folder, base_url: str) -> tuple[str, object]:
    """A synthetic corpus (2 conversations) and a map_reduce × single_pass grid on ``base_url``; the TOML path
    and the turn text the fault rule will strike."""
    corpus = generate_synthetic(0, conversations=2, months=1, sessions=4, single_facts=2, updated_facts=1,
                                temporal=1, multi_hop=1, abstention=1)
    turn = list(corpus.conversations[0].turns())[6]
    everywhere = [t.text for c in corpus.conversations for t in c.turns()]
    assert everywhere.count(turn.text) == 1, turn.text  # the rule strikes one chunk of one cell
    path = corpus.save(folder / "corpus.jsonl")
    toml = folder / "grid.toml"
    toml.write_text(textwrap.dedent(f"""
        name = "degraded"
        [corpus]
        path = "{path}"
        [grid]
        chunkers = [{{ name = "turn_window", max_turns = 4 }}]
        summarizers = [{{ name = "map_reduce", max_tokens = 16, merge_max_tokens = 24 }}, {{ name = "none" }}]
        recallers = ["bm25"]
        [run]
        backends = [{{ preset = "simulated", base_url = "{base_url}", {BACKEND} }}]
        embedders = ["hashing"]
        ks = [1, 5]
        cache = "run"
        """), encoding="utf-8")
    return str(toml), turn.text


def stable(df: pd.DataFrame) -> pd.DataFrame:
    """Rows without what a run paid (timing, cache hits) or which attempt of the folder wrote them."""
    paid = df["metric"].str.contains("latency|cached_calls|paid_", regex=True)
    keep = df[~paid].drop(columns=["cell_id", "attempt"])
    return keep.sort_values(["pipeline", "conversation_id", "probe_id", "metric"]).reset_index(drop=True)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The fault-free run and the faulty one (same server, so the same cell ids), before any resume."""
    folder = tmp_path_factory.mktemp("degraded")
    with SimulatedServer(latency_s=0.001) as server:
        toml, text = grid_toml(folder, server.base_url)
        reference = run_experiment(ExperimentSpec.from_toml(toml), folder / "reference")
        server.reset()  # a fresh request log
        rule = server.fail_matching("500", contains=text, excludes=MERGE)
        df = run_experiment(ExperimentSpec.from_toml(toml), folder / "run")
        struck = [r for r in server.chat_log() if r.rule == rule]
        yield folder, reference, df, struck, server, toml


def test_one_chunk_failing_every_attempt_flags_its_cell_in_the_rows(runs):
    folder, reference, df, struck, _, _ = runs
    assert df.attrs["failed_cells"] == [] and len(struck) == 3  # every attempt of the one call
    flagged = df[df["degraded"] > 0]
    assert flagged["cell_id"].nunique() == 1 and set(flagged["summarizer"]) == {"map_reduce"}
    assert (flagged["degraded"] == 1).all()
    metric = flagged[flagged["metric"] == "degraded.summarize.chunk_excerpt"]
    assert len(metric) == 1 and metric["value"].iloc[0] == 1.0 and metric["probe_id"].iloc[0] == ""
    assert not df["metric"].str.startswith("degraded.").any() or set(
        df.loc[df["metric"].str.startswith("degraded."), "cell_id"]) == set(flagged["cell_id"])
    # the flag survives the parquet round trip (a fresh read of the file, not the returned frame)
    parquet = pd.read_parquet(folder / "run" / "results.parquet")
    assert parquet["degraded"].dtype == "int64"
    assert set(parquet.loc[parquet["degraded"] > 0, "cell_id"]) == set(flagged["cell_id"])
    assert (reference["degraded"] == 0).all()
    # the cells not degraded have the fault-free rows
    clean = stable(df[df["degraded"] == 0])
    want = stable(reference[reference["cell_id"].isin(set(df["cell_id"]) - set(flagged["cell_id"]))])
    pd.testing.assert_frame_equal(clean, want)
    # the attempts tally of the degraded cell is in the log
    (attempts,) = [e for e in read_log(folder / "run" / "log.jsonl")
                   if e["event"] == "call_attempts" and e["cell_id"] in set(flagged["cell_id"])]
    assert attempts["phases"]["summarize"]["calls.failed.attempts"] == 1
    assert attempts["degraded"] == {"degraded.summarize.chunk_excerpt": 1}


def test_the_report_marks_the_degraded_pipeline_and_says_what_degraded_where(runs):
    from lyra_lab.reports import write_report

    folder, _, df, _, _, _ = runs
    pipeline = df.loc[df["degraded"] > 0, "pipeline"].iloc[0]
    write_report(folder / "run", n_resamples=50)
    md = (folder / "run" / "report" / "summary.md").read_text(encoding="utf-8")
    table = [line for line in md.splitlines() if line.startswith(f"| {pipeline.replace('|', chr(92) + '|')}")]
    assert table and all("⚠ degraded (1)" in line for line in table), table
    clean = df.loc[df["degraded"] == 0, "pipeline"].iloc[0].replace("|", "\\|")
    # the clean pipeline's own label is never marked; where a table names the degraded one beside it (the
    # frontier's "dominated by"), the degraded one carries its mark there too
    rows = [line for line in md.splitlines() if line.startswith(f"| {clean} ")]
    assert rows and all(line.split(" | ")[0] == f"| {clean}" for line in rows), rows
    prefix, _, rest = pipeline.partition("|")
    marked = f"{prefix} ⚠ degraded (1)" + chr(92) + f"|{rest}"  # as the report labels it
    naming = [row for row in rows if prefix in row.split(" | ", 1)[1]]
    assert all(marked in row for row in naming), naming
    assert "> **Warning:** ⚠ degraded: 1 pipeline(s) fell back or lost calls" in md
    section = md.split("\n## Degradation and retries\n")[1]
    assert f"- `{pipeline}`: 1 of 2 cell(s) degraded: 1 degraded.summarize.chunk_excerpt" in section
    assert "degraded.summarize.chunk_excerpt at chunk" in section and "(attempts after 3 attempt(s))" in section
    assert "1 failed (attempts 1)" in section  # the attempts tally of the run's calls
    page = (folder / "run" / "report" / "report.html").read_text(encoding="utf-8")
    assert "⚠ degraded (1)" in page and "degraded.summarize.chunk_excerpt" in page
    summary = pd.read_csv(folder / "run" / "report" / "summary.csv")
    assert summary.set_index("pipeline")["degraded"].to_dict() == {
        p: (1 if p == pipeline else 0) for p in summary["pipeline"]}
    from lyra_lab.commands.run import compact_table

    compact = compact_table(summary)  # what `lyra-lab demo` prints
    assert f"{pipeline} ⚠ degraded (1)" in compact and compact.count("⚠") == 1


def test_compare_warns_in_one_line_when_either_side_is_degraded(runs, capsys):
    from lyra_lab.cli import main

    folder, _, df, _, _, _ = runs
    pipeline = df.loc[df["degraded"] > 0, "pipeline"].iloc[0]
    assert main(["compare", str(folder / "reference"), str(folder / "run"), "--resamples", "50",
                 "--out", str(folder / "cmp")]) == 0
    out = capsys.readouterr().out
    warnings = [line for line in out.splitlines() if "⚠ degraded" in line and line.startswith("> **Warning:**")]
    assert len(warnings) == 1 and f"run: {pipeline} (1 of 2 cell(s)" in warnings[0]
    assert "reference:" not in warnings[0]  # the fault-free side is not named
    assert f"| run/{pipeline.partition('|')[0]} ⚠ degraded (1)" in out.replace("\\|", "|")
    assert main(["compare", str(folder / "reference"), "--resamples", "50", "--out", str(folder / "cmp1")]) == 0
    assert "⚠ degraded" not in capsys.readouterr().out  # a fault-free run alone: no warning


def test_a_resume_reruns_the_degraded_cell_paying_only_the_calls_that_failed(runs):
    """Runs last in this module: it heals the faulty run (the fault rule lifted) for good."""
    folder, reference, df, _, server, toml = runs
    degraded = set(df.loc[df["degraded"] > 0, "cell_id"])
    spec = ExperimentSpec.from_toml(toml)
    from lyra_lab.cli import main

    # opting out (the CLI's flag): nothing runs, the degraded cell stays as it was
    assert main(["run", toml, "--run-dir", str(folder / "run"), "--keep-degraded", "--no-report", "--quiet"]) == 0
    kept = load_results(folder / "run")
    assert set(kept.loc[kept["degraded"] > 0, "cell_id"]) == degraded
    started = [e for e in read_log(folder / "run" / "log.jsonl") if e["event"] == "cell_started"]
    assert len(started) == 4  # each cell started once: in the faulty run
    kept = run_experiment(spec, folder / "run", RunOptions(keep_degraded=True))
    assert set(kept.loc[kept["degraded"] > 0, "cell_id"]) == degraded
    server.reset()  # the provider recovered: the rule is lifted (and the request log starts afresh)
    healed = run_experiment(spec, folder / "run")
    # paid: the chunk call that failed, and the merge of its window (its prompt had quoted the fallback);
    # the response cache served every other call of the cell
    assert [r.outcome for r in server.chat_log()] == ["ok", "ok"]
    (cell,) = degraded
    calls = healed[(healed["cell_id"] == cell) & (healed["metric"].isin(["summarize.calls", "summarize.cached_calls"]))]
    per = calls.drop_duplicates("metric").set_index("metric")["value"]
    assert per["summarize.cached_calls"] == per["summarize.calls"] - 2
    assert (healed["degraded"] == 0).all()
    pd.testing.assert_frame_equal(stable(healed), stable(reference))
    events = [e for e in read_log(folder / "run" / "log.jsonl") if e["event"] == "cell_resumed"]
    reruns = [e for e in events if e.get("rerun") == "degraded"]
    assert [e["cell_id"] for e in reruns] == [cell] and reruns[0]["degraded"] == 1
    assert load_results(folder / "run")["degraded"].eq(0).all()
