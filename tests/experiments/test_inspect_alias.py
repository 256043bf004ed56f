"""An aliased pipeline (the same memory as another, run once, rows copied) shows its source's record, named."""

from __future__ import annotations

from pathlib import Path

import pytest

from lyra_lab.cli import main
from lyra_lab.experiments import ExperimentSpec, RunOptions, inspect_probe, run_experiment
from lyra_lab.reports import write_report

DATASET = Path(__file__).resolve().parents[2] / "datasets" / "synthetic_small.jsonl"
ALIAS, SOURCE = "turn_window+single_pass+none|dense", "token_budget+single_pass+none|dense"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    spec = ExperimentSpec.from_dict({
        "name": "aliases", "corpus": {"path": str(DATASET), "conversations": 1, "max_sessions": 3, "max_probes": 3},
        "grid": {"chunkers": ["token_budget", "turn_window"], "summarizers": ["single_pass"], "recallers": ["dense"]},
        "run": {"backends": ["fake"], "embedders": ["hashing"], "cache": "off"}})
    assert [a["pipeline"] for a in spec.aliases] == ["turn_window+single_pass+none"]  # single_pass ignores the chunker
    out = tmp_path_factory.mktemp("run") / "run"
    run_experiment(spec, out, RunOptions(progress=False))
    return out


def probe_id(run_dir):
    from lyra_lab.runs import load_results

    df = load_results(run_dir, write=False)
    return sorted(p for p in df["probe_id"].unique() if p)[0]


def test_the_alias_shows_the_hits_and_context_of_the_pipeline_it_copies(run_dir):
    view = inspect_probe(run_dir, probe_id(run_dir))
    by_name = {p.pipeline: p for p in view.pipelines}
    alias, source = by_name[ALIAS], by_name[SOURCE]
    assert alias.same_as == SOURCE and source.same_as is None
    assert alias.hits and alias.hits == source.hits and alias.context == source.context
    assert alias.cell_id != source.cell_id
    text = view.render()
    assert f"same memory as {SOURCE} (an alias: run once, its rows copied)" in text
    assert "retrieved: nothing recorded" not in text


def test_show_and_the_report_drill_down_name_the_source(run_dir, capsys):
    assert main(["show", str(run_dir), probe_id(run_dir), "--pipeline", "turn_window"]) == 0
    assert f"same memory as {SOURCE}" in capsys.readouterr().out
    write_report(run_dir, n_resamples=20)
    page = (run_dir / "report" / "report.html").read_text(encoding="utf-8")
    assert f"same memory as {SOURCE}" in page and "no recall event in the log" not in page
