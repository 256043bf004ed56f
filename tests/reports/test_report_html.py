"""report.html from a real (fake-backend) run: self-contained, with a per-probe drill-down that opens in Chromium."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from lyra_lab.corpus import load
from lyra_lab.reports import write_report
from lyra_lab.experiments import ExperimentSpec, run_experiment
from tests.helpers.browser import chromium_driver

DATASET = Path(__file__).resolve().parents[2] / "datasets" / "synthetic_small.jsonl"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    spec = ExperimentSpec.from_dict({
        "name": "html", "corpus": {"path": str(DATASET), "conversations": 1, "max_sessions": 3, "max_probes": 4},
        "grid": {"chunkers": [{"name": "turn_window", "max_turns": 4}], "summarizers": ["single_pass"],
                 "recallers": ["dense", "bm25"]},
        "run": {"backends": ["fake"], "embedders": ["hashing"], "ks": [1, 5], "cache": "off"},
        "qa": {"enabled": True, "judges": [{"prompt": "correct_wrong_v1", "backend": "fake"}]}})
    out = tmp_path_factory.mktemp("run") / "run"
    run_experiment(spec, out)
    write_report(out, n_resamples=50)
    return out


def test_report_html_is_one_self_contained_file(run_dir):
    page = (run_dir / "report" / "report.html").read_text(encoding="utf-8")
    # quality_vs_cost, by_category, quality_vs_context_tokens, latency, paired_differences; in their sections:
    # retrieval_and_answering (the split, the run answered) and frontier
    assert page.count("data:image/png;base64,") == 7
    links = re.findall(r"""(?:src|href)=["']?([^"' >]*)""", page)
    assert links and all(link.startswith(("data:", "#")) for link in links)  # nothing fetched from elsewhere
    assert "<script" not in page and "<link" not in page
    # the drill-down: every probe's question and gold answer, each pipeline's hits, answer and verdict
    corpus = load(DATASET)
    conv = corpus.conversations[0].id
    shown = [p for p in corpus.probes_for(conv) if f'id="probe-{p.id}"' in page]
    assert len(shown) == 4
    import html

    for probe in shown:
        assert html.escape(probe.question) in page and html.escape(probe.answer) in page
    assert page.count('<details class="pipe">') == 4 * 2  # 4 probes x 2 recallers
    assert "turn_window+single_pass+none|dense" in page and "<b>Judge:</b> " in page
    assert page.count("<th>score</th>") == 4 * 2 and "no recall event" not in page  # hits from the log
    assert "All probes come from one conversation (&#x27;" in page and "each probe is a unit here" in page


def test_report_html_paired_comparisons_of_the_lead_metric(run_dir):

    from lyra_lab.runs import load_results

    page = (run_dir / "report" / "report.html").read_text(encoding="utf-8")
    metric = re.search(r"<h2 id=paired>Paired comparisons: ([^<]+)</h2>", page).group(1)
    # the headline metric: the middle context budget of answer_in_context (see evaluate._summary)
    df = load_results(run_dir)
    budgets = sorted(int(m.split("@")[1][:-3]) for m in df["metric"].unique() if m.startswith("answer_in_context@"))
    assert metric == f"answer_in_context@{budgets[len(budgets) // 2]}tok"
    # the probes both recallers scored (NaN = no evidence: not a score), and the best by mean, from the rows
    wide = df[df["metric"] == metric].pivot(index="probe_id", columns="pipeline", values="value").dropna()
    means = wide.mean().sort_index().sort_values(ascending=False, kind="stable")
    best, other = means.index
    # one conversation: each probe is its own unit; exact sign-flip p over the per-probe differences
    diff = wide[other] - wide[best]
    flips = [abs(sum(s * d for s, d in zip(signs, diff))) >= abs(diff.sum()) - 1e-12
             for signs in itertools.product((1, -1), repeat=len(diff))]
    p = sum(flips) / len(flips)
    row = re.search(rf"<tr><td>{re.escape(other)}</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td>"
                    rf"<td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td></tr>", page)
    assert row.group(1) == f"{diff.mean():+.3f}" and row.group(3) == f"{p:.3g}"
    assert row.group(5) == row.group(6) == str(len(wide))  # n probes, n clusters (= probes)
    low, high = (float(x) for x in row.group(2).strip("[]").split(", "))
    # the verdict's words agree with the numbers: worse only by the test, "not shown worse" when the CI alone
    # excludes 0, "no difference shown" when it holds 0
    expected = "✗ worse" if p < 0.05 else "not shown worse" if high < 0 or low > 0 else "no difference shown"
    assert row.group(4).startswith(expected)
    assert f"<tr><td>{best}</td><td>best (mean {means[best]:.3f})</td>" in page

def test_report_html_opens_in_headless_chromium(run_dir, tmp_path):
    driver = chromium_driver(tmp_path / "chromium-profile")
    try:
        from selenium.webdriver.common.by import By

        driver.get((run_dir / "report" / "report.html").as_uri())
        assert driver.title.startswith("Report:")
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == []
        images = driver.find_elements(By.TAG_NAME, "img")
        assert len(images) == 7 and all(driver.execute_script("return arguments[0].naturalWidth", i) > 0
                                        for i in images)
        # the first screen at 1400×900 holds the headline and a whole figure; warnings and definitions come later
        driver.set_window_size(1400, 900)  # the window: the page itself gets less (here about 1400×760)
        height = driver.execute_script("return window.innerHeight")
        box = "const r = arguments[0].getBoundingClientRect(); return [r.top, r.bottom, r.height];"
        top, bottom, _ = driver.execute_script(box, driver.find_element(By.CSS_SELECTOR, ".headline"))
        assert 0 <= top < bottom <= height
        figure = driver.find_element(By.CSS_SELECTOR, ".lead img")
        top, bottom, drawn = driver.execute_script(box, figure)
        assert drawn > 200 and bottom <= height, (top, bottom, height)
        notes = driver.find_element(By.ID, "warnings")
        assert driver.execute_script(box, notes)[0] > bottom  # below the figure
        # tables fit the page: a wide one scrolls inside its own box, never the page
        assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        probe = driver.find_element(By.CSS_SELECTOR, "details.probe")
        assert probe.get_attribute("open") is None
        probe.find_element(By.TAG_NAME, "summary").click()
        assert probe.get_attribute("open") is not None
        pipe = probe.find_element(By.CSS_SELECTOR, "details.pipe")
        pipe.find_element(By.TAG_NAME, "summary").click()
        assert pipe.get_attribute("open") is not None
        assert "Gold answer" in probe.text and "Answer:" in pipe.text
    finally:
        driver.quit()


def test_drill_down_shows_each_hits_kind_digest_text_and_the_rendered_context(tmp_path):
    import html
    import json

    spec = ExperimentSpec.from_dict({  # summaries only in memory, so every hit is a summary
        "name": "digests", "corpus": {"path": str(DATASET), "conversations": 1, "max_sessions": 3, "max_probes": 2},
        "grid": {"chunkers": [{"name": "turn_window", "max_turns": 4}], "summarizers": ["single_pass"],
                 "keep_raw": [False], "recallers": ["dense"]},
        "run": {"backends": ["fake"], "embedders": ["hashing"], "ks": [1, 5], "cache": "off"}})
    run_experiment(spec, tmp_path / "run")
    write_report(tmp_path / "run", n_resamples=20)
    page = (tmp_path / "run" / "report" / "report.html").read_text(encoding="utf-8")
    details = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text(encoding="utf-8").splitlines()
               if '"probe_detail"' in line]
    hits = [h for d in details for h in d["hits"]]
    assert hits and {h["kind"] for h in hits} == {"summary"}
    hit = hits[0]
    assert f"summary (covers {hit['n_turns']} turns)" in page
    assert html.escape(hit["text"][:60]) in page  # the summary's own text, not just its id
    assert page.count("<summary>rendered context</summary>") == len(details) == 2
    assert html.escape(details[0]["context"].splitlines()[0]) in page
