"""The report's answer-prompt section: the table per pipeline × prompt (figure, n, CI, repeat spread and
agreement, checked against a hand count), the paired differences, and the figure, in summary.md and
report.html of a small run on a fake backend (``FakeLLM``)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd
import pytest

from lyra_lab.backends import FakeLLM
from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment
from lyra_lab.reports import figure_problems, write_report
from lyra_lab.reports._qa_prompts import draw_prompt_figure, prompt_differences, prompt_table

sys.path.insert(0, str(Path(__file__).parents[1] / "experiments"))
from conftest import tiny_corpus  # noqa: E402

RUN = """
name = "prompts"
[corpus]
path = "tiny.jsonl"
[grid]
chunkers = [{ name = "turn_window", max_turns = 2 }]
summarizers = ["none"]
recallers = ["bm25"]
[run]
backends = ["fake"]
embedders = ["none"]
ks = [1]
cache = "off"
[qa]
enabled = true
prompts = ["short_v1", "locomo"]
repeats = 3
temperature = 0.5
"""


def _rows(values: dict[tuple[str, str, str, int], float]) -> pd.DataFrame:
    """QA rows of one pipeline: (prompt, conversation, probe, repeat) -> qa_f1."""
    return pd.DataFrame([{"pipeline": "p", "backend": "b", "embedder": "e", "metric": "qa_f1", "seed": 0,
                          "answer_prompt": prompt, "conversation_id": conv, "probe_id": probe, "repeat": repeat,
                          "value": value} for (prompt, conv, probe, repeat), value in values.items()])


def test_the_table_equals_a_hand_count_of_repeats_spread_and_agreement():
    values = {("A", "c1", "x", r): 1.0 for r in range(3)}
    values.update({("A", "c2", "y", 0): 1.0, ("A", "c2", "y", 1): 0.0, ("A", "c2", "y", 2): 0.0})
    values.update({("B", c, p, r): 0.0 for c, p in (("c1", "x"), ("c2", "y")) for r in range(3)})
    table = prompt_table(_rows(values), "qa_f1", n_resamples=50).set_index("prompt")
    # A: probe means 1 and 1/3 -> 2/3; repeat means 1, 1/2, 1/2 -> sd 0.2887; one probe of two agrees
    assert table.loc["A", "mean"] == pytest.approx(2 / 3) and table.loc["A", "n"] == 2
    assert table.loc["A", "repeats"] == 3
    assert table.loc["A", "repeat_sd"] == pytest.approx(pd.Series([1.0, 0.5, 0.5]).std(ddof=1))
    assert table.loc["A", "agreement"] == pytest.approx(0.5)
    assert table.loc["B", "mean"] == 0.0 and table.loc["B", "repeat_sd"] == 0.0 and table.loc["B", "agreement"] == 1.0
    diffs = prompt_differences(_rows(values), "qa_f1", n_resamples=50)
    assert diffs["prompt"].tolist() == ["B"] and diffs["reference"].tolist() == ["A"]
    assert diffs["diff"].iloc[0] == pytest.approx(-2 / 3) and diffs["n"].iloc[0] == 2  # repeats within probes


def answer(messages) -> str:
    """Right under LoCoMo's prompt, wrong under short_v1."""
    text = messages[-1]["content"]
    asked = re.search(r"what did I say: (\w+)\?", text)
    return asked.group(1) if asked and "Short answer:" in text else "no idea"


def test_summary_and_page_show_the_table_the_differences_and_the_figure(tmp_path):
    tiny_corpus().save(tmp_path / "tiny.jsonl")
    (tmp_path / "e.toml").write_text(RUN, encoding="utf-8")
    run_experiment(ExperimentSpec.from_toml(tmp_path / "e.toml"), tmp_path / "run", None,
                   Injected(backends={"fake": FakeLLM(respond=answer)}))
    write_report(tmp_path / "run", n_resamples=50)
    report = tmp_path / "run" / "report"
    md = (report / "summary.md").read_text(encoding="utf-8")
    section = md.split("\n## Answer prompts and repeats\n")[1].split("\n## ")[0]
    # 8 probes (6 facts + 2 abstentions) each under both prompts, 3 repeats that all agree
    assert "| turn_window+none+none\\|bm25 | locomo | snap-research/LoCoMo task_eval/gpt_utils.py" in section
    assert re.search(r"\| short_v1 \| lyra-lab \| 8 \| [0-9.]+ \[[0-9.]+, [0-9.]+\] \| 3 \| 0\.000 \| 1\.000 \|",
                     section), section
    assert "| turn_window+none+none\\|bm25 | locomo | 8 | +" in section  # locomo minus short_v1, paired
    # beside the summary table's QA figures: what they average, each one's repeat spread and agreement
    assert "Each QA figure averages 3 repeats per probe (n counts probes)" in md
    assert re.search(r"bm25 · locomo: qa_f1 [0-9.]+, between-repeat sd 0\.000, within-probe agreement 1\.000 \(n=8\)",
                     md)
    page = (report / "report.html").read_text(encoding="utf-8")
    assert "<h2 id=answer_prompts>Answer prompts and repeats</h2>" in page
    assert 'alt="answer_prompts"' in page and (report / "answer_prompts.png").is_file()
    # the figure is the section's (TableSection.figures): under its heading, once, not in the Figures list
    own = page[page.index("<h2 id=answer_prompts>"):].split("<h2", 2)[1]
    assert '<img alt="answer_prompts"' in own and page.count('<img alt="answer_prompts"') == 1
    assert "![answer_prompts](answer_prompts.png)" in section
    assert (report / "answer_prompts.csv").is_file() and (report / "answer_prompt_differences.csv").is_file()


def test_the_figure_has_nothing_over_anything():
    values = {(p, f"c{i % 3}", f"q{i}", r): float((i + r) % 2) for p in ("short_v1", "locomo", "mem0")
              for i in range(9) for r in range(3)}
    table = prompt_table(_rows(values), "qa_f1", n_resamples=50)
    diffs = prompt_differences(_rows(values), "qa_f1", n_resamples=50)
    assert figure_problems(draw_prompt_figure(table, diffs, "qa_f1")) == []
