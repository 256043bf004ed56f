"""`lyra-lab view`: a page over a folder of real runs (finished, partial, failed, unreadable), opened in Chromium."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from lyra_lab.backends import FakeLLM
from lyra_lab.cli import main
from lyra_lab.experiments import ExperimentSpec, Injected, RunOptions, run_experiment
from lyra_lab.reports import write_index, write_report
from lyra_lab.runs import load_results, run_status
from lyra_lab.stats import aggregate
from tests.helpers.browser import chromium_driver

DATASET = Path(__file__).resolve().parents[2] / "datasets" / "synthetic_small.jsonl"
METRIC = "answer_in_context@512tok"


def spec(name: str, summarizer: str = "single_pass") -> ExperimentSpec:
    return ExperimentSpec.from_dict({
        "name": name, "description": f"the {name} run",
        "corpus": {"path": str(DATASET), "conversations": 1, "max_sessions": 2},
        "grid": {"chunkers": ["turn_window"], "summarizers": ["none", summarizer], "recallers": ["bm25", "dense"]},
        "run": {"backends": ["fake"], "embedders": ["hashing"], "cache": "off"}})


class FirstChunkCall:
    """Fails the first map_reduce chunk call (not a merge): its summary falls back to an excerpt."""

    def __init__(self) -> None:
        self.seen = 0

    def __call__(self, messages) -> bool:
        text = messages[-1]["content"]
        if "Combine" in text or "Summarize" not in text:
            return False
        self.seen += 1
        return self.seen == 1


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """finished (with its report), partial (a finished cell's rows lost), failed (a cell's LLM calls fail),
    unreadable (a spec.json that is not JSON), and a folder that is not a run."""
    root = tmp_path_factory.mktemp("runs")
    run_experiment(spec("finished"), root / "finished", RunOptions(progress=False))
    write_report(root / "finished", n_resamples=50)
    shutil.copytree(root / "finished", root / "partial", ignore=shutil.ignore_patterns("report"))
    (root / "partial" / "results.parquet").unlink()
    sorted((root / "partial" / "rows").glob("*.jsonl"))[0].unlink()
    failing = FakeLLM(fail=lambda messages: "Summarize" in messages[-1]["content"])
    df = run_experiment(spec("failed"), root / "failed", RunOptions(progress=False), Injected(backends={"fake": failing}))
    assert len(df.attrs["failed_cells"]) == 1
    degrading = FakeLLM(fail=FirstChunkCall())  # one chunk summary falls back to an excerpt: a degraded cell
    df = run_experiment(spec("degraded", summarizer="map_reduce"), root / "degraded", RunOptions(progress=False),
                        Injected(backends={"fake": degrading}))
    assert not df.attrs.get("failed_cells") and df["degraded"].max() == 1
    (root / "broken").mkdir()
    (root / "broken" / "spec.json").write_text("{", encoding="utf-8")
    (root / "notes").mkdir()
    (root / "notes" / "todo.txt").write_text("not a run", encoding="utf-8")
    return root


def test_status_of_each_run(runs):
    finished, partial, failed = (run_status(runs / n) for n in ("finished", "partial", "failed"))
    assert (finished.state, finished.cells, finished.finished, finished.failed) == ("finished", 2, 2, ())
    assert (partial.state, partial.cells, partial.finished) == ("partial", 2, 1)
    assert (failed.state, failed.cells, failed.finished, len(failed.failed)) == ("failed", 2, 1, 1)
    assert failed.describe() == "1 of 2 cells finished, 1 failed"


def test_status_from_a_hand_made_log(tmp_path):
    """A cell that failed in attempt 1 and finished in attempt 2 is not failed; one interrupted is partial."""
    (tmp_path / "rows").mkdir()
    (tmp_path / "rows" / "a.jsonl").write_text("", encoding="utf-8")
    events = [{"event": "run_started", "cells": 3, "started_at": "2026-01-01T00:00:00"},
              {"event": "cell_done", "cell_id": "a"}, {"event": "cell_failed", "cell_id": "b"},
              {"event": "run_done"},
              {"event": "run_started", "cells": 3, "started_at": "2026-01-02T00:00:00"},
              {"event": "cell_done", "cell_id": "b"}, {"event": "run_interrupted"}]
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events) + '{"event": "cell_do',
                                        encoding="utf-8")  # the last line cut short by a kill
    (tmp_path / "rows" / "b.jsonl").write_text("", encoding="utf-8")
    status = run_status(tmp_path)
    assert (status.state, status.cells, status.finished, status.failed) == ("partial", 3, 2, ())
    assert status.attempts == 2 and status.stopped and status.started_at == "2026-01-02T00:00:00"
    assert status.describe() == "2 of 3 cells finished (stopped, or still running)"


def test_the_page_lists_every_run_with_its_status_headline_and_links(runs):
    page = write_index(runs)
    assert page.path == runs / "index.html" and {e.name for e in page.runs} == {"finished", "partial", "failed",
                                                                                  "degraded", "broken"}
    text = page.path.read_text(encoding="utf-8")
    for name, state in (("finished", "finished"), ("partial", "partial"), ("failed", "failed"),
                        ("broken", "unreadable")):
        row = re.search(rf'<tr id="run-{name}">.*?</tr>', text, re.S).group(0)
        assert f'class="state {state}"' in row
    # the headline: the best pipeline's mean, CI and n, as aggregate computes them from the rows
    df = load_results(runs / "finished", write=False)
    best = aggregate(df[df["metric"] == METRIC], by=["pipeline"]).sort_values("mean", ascending=False).iloc[0]
    row = re.search(r'<tr id="run-finished">.*?</tr>', text, re.S).group(0)
    assert f"<code>{best['pipeline']}</code> {best['mean']:.3f} [" in row and f"n={int(best['n'])}" in row
    drawn = sorted(p.name for p in (runs / "finished" / "report").glob("*.png"))  # every figure the report drew
    assert 'href="finished/report/report.html#probes"' in row and row.count("<img") == len(drawn) >= 6
    assert all(f'src="finished/report/{name}"' in row for name in drawn) and "frontier.png" in drawn
    assert "no report yet: <code>lyra-lab report" in re.search(r'<tr id="run-partial">.*?</tr>', text, re.S).group(0)
    assert "failed: syn-0-" in text and "run the same command again" in text
    assert "the finished run" in text and "4 memory pipelines" not in text and "2 memory pipelines × 2 recallers" in text
    assert "<script" not in text and "notes" not in re.findall(r'<tr id="run-([^"]+)"', text)


def test_a_degraded_run_is_marked_with_what_fell_back(runs):
    text = write_index(runs).path.read_text(encoding="utf-8")
    row = re.search(r'<tr id="run-degraded">.*?</tr>', text, re.S).group(0)
    assert 'class="state finished"' in row and '<span class="state degraded">⚠ degraded</span>' in row
    assert "turn_window+map_reduce+none|bm25: 1 of 1 cell(s), 1 degraded.summarize.chunk_excerpt" in row
    # in the headline, a degraded pipeline carries the mark with its count; the others do not
    marked = re.findall(r"<li><code>([^<]+)</code>( <span class=\"state degraded\">⚠ degraded \(1\)</span>)?", row)
    assert marked and all(bool(m) == ("map_reduce" in label) for label, m in marked)
    assert "degraded" not in re.search(r'<tr id="run-finished">.*?</tr>', text, re.S).group(0)


def test_view_command_prints_a_line_per_run(runs, capsys):
    assert main(["view", str(runs)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert any(line.startswith("failed: failed, 1 of 2 cells finished, 1 failed") for line in out)
    assert any(line.startswith("broken: unreadable") for line in out)
    assert any(line.startswith("degraded: finished, 2 of 2 cells finished; ⚠ degraded: 2 pipeline(s)") for line in out), out
    assert not any("⚠" in line for line in out if line.startswith("finished:"))
    assert out[-1] == f"wrote: {runs / 'index.html'}"


def test_view_of_a_folder_without_runs_is_one_line(tmp_path, capsys):
    assert main(["view", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no run folder in it" in err


def test_the_page_opens_in_headless_chromium_and_its_links_work(runs, tmp_path):
    page = write_index(runs).path
    driver = chromium_driver(tmp_path / "chromium-profile")
    try:
        from selenium.webdriver.common.by import By

        driver.get(page.as_uri())
        assert driver.title == f"Runs in {runs.name}"
        assert [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")] == []
        rows = driver.find_elements(By.CSS_SELECTOR, "tbody tr")
        assert len(rows) == 5
        states = {r.get_attribute("id"): r.find_element(By.CSS_SELECTOR, ".state").text for r in rows}
        assert states == {"run-finished": "finished", "run-partial": "partial", "run-failed": "failed",
                          "run-degraded": "finished", "run-broken": "unreadable"}
        assert driver.find_element(By.CSS_SELECTOR, "#run-degraded .state.degraded").is_displayed()
        finished = driver.find_element(By.ID, "run-finished")
        finished.find_element(By.TAG_NAME, "summary").click()  # the figures
        from selenium.webdriver.support.ui import WebDriverWait

        images = finished.find_elements(By.TAG_NAME, "img")
        loaded = "return arguments[0].complete && arguments[0].naturalWidth > 0"  # lazy: they load once shown
        assert len(images) == len(list((runs / "finished" / "report").glob("*.png"))) >= 6
        WebDriverWait(driver, 20).until(lambda d: all(d.execute_script(loaded, i) for i in images))
        finished.find_element(By.LINK_TEXT, "per-probe drill-down").click()
        assert driver.title == "Report: finished" and driver.current_url.endswith("report.html#probes")
        assert driver.find_element(By.ID, "probes").is_displayed()
    finally:
        driver.quit()


def test_the_spec_line_names_memory_systems_beside_pipelines():
    """The issue's grid: one memory pipeline, two recallers and mem0 beside them (its headline ranked mem0:raw first)."""
    from lyra_lab.reports._view import grid_line

    def line(grid):
        return grid_line(ExperimentSpec.from_dict({"name": "s", "corpus": {"path": str(DATASET)}, "grid": grid}).to_dict())

    assert line({"chunkers": ["turn_window"], "recallers": ["bm25", "dense"], "systems": ["mem0"]}) == \
        "1 memory pipeline × 2 recallers + 1 memory system (mem0:raw)"
    assert line({"systems": ["mem0", {"name": "http", "url": "http://127.0.0.1:8000/memory"}]}) == \
        "2 memory systems (mem0:raw, http:127.0.0.1:8000/memory)"
    assert line({"chunkers": ["turn_window"], "summarizers": ["none", "single_pass"], "recallers": ["bm25"]}) == \
        "2 memory pipelines × 1 recaller"
    assert grid_line({"systems": [{"system": {"name": "gone"}}]}) == "1 memory system (gone)"  # cannot rebuild: named


def test_the_page_at_1400_by_900_cuts_nothing_off_and_sets_no_text_over_text(runs, tmp_path):
    """The screenshot the page was looked at by (``view.png``): no page-wide scroll, no cell's text past its cell."""
    page = write_index(runs).path
    driver = chromium_driver(tmp_path / "chromium-profile")
    try:
        driver.set_window_size(1400, 900)
        driver.get(page.as_uri())
        assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        spilled = driver.execute_script("""
            return [...document.querySelectorAll('td, th, li, code')]
              .filter(e => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === 'visible'
                           && getComputedStyle(e).display !== 'inline')
              .map(e => e.tagName + ': ' + e.textContent.slice(0, 60));""")
        assert spilled == []
        boxes = driver.execute_script("""
            const out = [];
            for (const row of document.querySelectorAll('tbody tr')) {
              const cells = [...row.children].map(c => c.getBoundingClientRect());
              for (let i = 1; i < cells.length; i++) out.push([cells[i - 1].right, cells[i].left]);
            }
            return out;""")
        assert all(right <= left + 1 for right, left in boxes), boxes  # neighbouring cells do not overlap
        assert driver.save_screenshot(str(tmp_path / "view.png"))
    finally:
        driver.quit()
