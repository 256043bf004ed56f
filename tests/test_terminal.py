"""What lyra-lab prints fits 100 columns: the CLI's wrapped standard output, and a probe's page."""

from __future__ import annotations

import io
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from lyra_lab._terminal import COLUMNS, WrappedLines, fit, human
from lyra_lab.cli import main
from lyra_lab.experiments._inspect import HitView, PipelineView, ProbeView

words = st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=30), min_size=1, max_size=60)


@given(words, st.integers(0, 8))
def test_a_wrapped_line_keeps_every_word_in_order_within_the_width(ws, indent):
    line = " " * indent + " ".join(ws)
    out = fit(line).split("\n")
    assert all(len(piece) <= COLUMNS for piece in out)  # no word here is longer than the width
    assert " ".join(" ".join(out).split()) == " ".join(ws)  # wrapped, nothing cut or reordered


def test_a_word_longer_than_the_width_stays_whole():
    path = "runs/" + "x" * 150 + "/report.html"
    assert fit(f"open {path}").split("\n") == ["open", path]  # on a line of its own, whole


def test_the_stream_wraps_finished_lines_and_passes_progress_redraws():
    target = io.StringIO()
    stream = WrappedLines(target)
    stream.write("a " * 80)
    assert target.getvalue() == ""  # held until the line ends
    stream.write("\n\r" + "bar " * 40 + "\n")
    stream.flush()
    first, second, bar = target.getvalue().split("\n")[:3]
    assert len(first) <= COLUMNS and len(second) <= COLUMNS and bar.startswith("\r") and len(bar) > COLUMNS


def test_the_cli_wraps_its_output_and_leaves_json_alone(capsys, tmp_path):
    corpus = Path(__file__).parent / "fixtures" / "corpus" / "messages.jsonl"
    assert main(["import", str(corpus)]) == 0
    assert all(len(line) <= COLUMNS for line in capsys.readouterr().out.splitlines())
    assert main(["import", str(corpus), "--json"]) == 0
    import json

    json.loads(capsys.readouterr().out)  # one JSON document, no line broken inside it


def test_numbers_are_written_for_people():
    assert [human(v) for v in (1024.0, 2300.0, 360.036, 0.5714, 1.25)] == ["1,024", "2,300", "360", "0.571", "1.25"]


def _view(pipelines: int) -> ProbeView:
    hits = tuple(HitView(i, f"turn:c:s1:t{i}", "turn", 1.0 / i, "word " * 200, evidence=i == 2) for i in range(1, 11))
    views = tuple(PipelineView(f"chunker_{i}+none+none|bm25", f"cell{i}", "bm25", hits, "line\n" * 300, 512.0,
                               "an answer " * 30, (("judge_a", 1, "yes"),)) for i in range(pipelines))
    return ProbeView(Path("runs/r"), "c:q1", "c", "1", "a question " * 20, "gold", (("c:s1:t2", "text " * 50),),
                     views)


def test_a_probe_page_of_many_pipelines_fits_sixty_lines_and_counts_the_rest():
    page = _view(24).page().split("\n")
    assert len(page) <= 60 and all(len(line) <= COLUMNS for line in page)
    assert any("evidence at rank 2 of 10" in line for line in page)
    assert page[-1].startswith("… ") and "more pipelines not shown" in page[-1]


def test_a_probe_page_of_few_pipelines_shows_them_all():
    page = _view(3).page()
    assert page.count("== chunker_") == 3 and "not shown" not in page
    assert len(_view(3).render().split("\n")) > 60  # the full view is what --full prints
