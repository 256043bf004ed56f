"""``lyra-lab demo`` end to end on fakes: its report carries the split, the ceilings and the frontier.

The demo's own experiment file (``lyra_lab/experiments/demo.toml``) with only its backend and embedder
swapped for the ``fake`` LLM and the ``hashing`` embedder (no model loads, no downloads), run through the
``demo`` command itself: the QA stage answers, so report.html has "Retrieval and answering apart", "Distance
to the ceilings" and "Frontier: quality against cost", each saying its n, and the demo's terminal lines fit
100 columns.
"""

from __future__ import annotations

import contextlib
import html
import io
import re
import tomllib

import pytest

from lyra_lab.cli import main
from lyra_lab.commands import demo
from lyra_lab.experiments import ExperimentSpec


def _fake_demo_toml(tmp_path):
    shipped = demo.demo_spec_path()
    text = shipped.read_text(encoding="utf-8")
    corpus = (shipped.parent / tomllib.loads(text)["corpus"]["path"]).resolve()
    text = re.sub(r'(?m)^backends = .*$', 'backends = ["fake"]', text, count=1).replace('embedders = ["e5"]',
                                                                                        'embedders = ["hashing"]')
    text = re.sub(r'(?m)^path = ".*"$', f'path = "{corpus.as_posix()}"', text, count=1)
    out = tmp_path / "demo_fake.toml"
    out.write_text(text, encoding="utf-8")
    return out


def _section(page: str, section_id: str) -> str:
    found = re.search(rf"<h2 id={section_id}>(.*?)(?=<h2|\Z)", page, flags=re.S)
    assert found, f"report.html has no section {section_id!r}"
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", found.group(1))).split())


@pytest.fixture(scope="module")
def fake_demo(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("demo")
    toml = _fake_demo_toml(tmp_path)
    spec = ExperimentSpec.from_toml(toml)
    assert spec.backends == ("fake",) and spec.embedders == ("hashing",) and spec.qa.enabled
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(demo, "demo_spec_path", lambda: toml)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["demo", "--run-dir", str(tmp_path / "run"), "--fresh", "--yes", "--quiet"])
    assert code == 0
    return tmp_path / "run", out.getvalue()


def test_the_demo_report_shows_the_split_the_ceilings_and_the_frontier_with_their_n(fake_demo):
    run_dir, _ = fake_demo
    report = run_dir / "report"
    page = (report / "report.html").read_text(encoding="utf-8")
    split = _section(page, "split")
    # 8 conversations, the first probe of each answered (a single fact, with evidence): n = 8 a pipeline
    assert "Retrieval and answering apart" in split and "qa_f1" in split and "n probes" in split
    for memory in ("raw=yes", "raw=no"):
        for recaller in ("dense", "bm25", "hybrid", "oracle", "full_context"):
            assert re.search(rf"token_budget\+single_pass\+none\+{re.escape(memory)}\|{recaller} 8 ", split), \
                (memory, recaller)
    ceilings = _section(page, "ceilings")
    assert "Distance to the ceilings" in ceilings and "to oracle" in ceilings and "to full_context" in ceilings
    assert ceilings.count("(n=8)") == 12  # 6 pipelines x 2 ceilings, each distance with its n
    frontier = _section(page, "frontier")
    assert "Frontier: quality against cost" in frontier and "qa_f1" in frontier and "(n=8)" in frontier
    assert frontier.count("ceiling (not a contender)") == 8  # 4 ceiling pipelines x 2 cost axes (no $ axis)
    pngs = {p.name for p in report.glob("*.png")}
    assert {"retrieval_and_answering.png", "frontier.png"} <= pngs


def test_the_demo_prints_lines_of_at_most_100_columns(fake_demo):
    _, printed = fake_demo
    lines = printed.splitlines()
    assert lines[0].startswith("lyra-lab demo: 2 memory pipelines × 5 recallers")
    assert lines[-1].startswith("demo finished in ")
    assert max(len(line) for line in lines) <= 100


def test_the_demo_names_its_backend_as_a_person_reads_it():
    """The bundled demo's backend is a table (its local window); the header says it in words, not a dict."""
    spec = ExperimentSpec.from_toml(demo.demo_spec_path())
    words = [demo._backend_words(b) for b in spec.backends]
    assert words == [f"local (a {spec.backends[0]['context_window']:,}-token window)"]  # type: ignore[index]
    assert demo._backend_words("fake") == "fake" and demo._backend_words({"preset": "ollama", "model": "m"}) == "ollama/m"

