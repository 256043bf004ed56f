"""One way to show a figure: every section's PNGs ride on ``TableSection.figures`` and appear under that
section's heading in report.html and summary.md, never handed over as ``files`` or the page's figure list."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from lyra_lab.reports._html import ReportPage, render_html
from lyra_lab.reports._judge_report import judge_section
from lyra_lab.reports._sections import TableSection

sys.path.insert(0, str(Path(__file__).parent))
from test_judge_errors import _rows  # noqa: E402


def _section_html(page: str, anchor: str) -> str:
    """The HTML from ``<h2 id=anchor>`` to the next ``<h2``."""
    return page[page.index(f"<h2 id={anchor}>"):].split("<h2", 2)[1]


def test_the_judge_prompts_figure_is_a_figure_of_the_judges_section(tmp_path):
    section = judge_section(_rows(pipelines=("p1", "p2"), judges=("own", "lenient")), tmp_path)
    assert isinstance(section, TableSection)
    assert [f.name for f in section.figures] == ["judge_prompts.png"]
    assert all(f.suffix == ".csv" for f in section.files)  # the CSVs only: the figure goes one way
    assert "![judge_prompts](judge_prompts.png)" in section.markdown()
    other = tmp_path / "other.png"
    other.write_bytes((tmp_path / "judge_prompts.png").read_bytes())
    page = render_html(ReportPage("r", [], [], (["a"], [["1"]]), None, [other], [], 0, judges=section))
    judges = _section_html(page, "judges")
    assert '<img alt="judge_prompts"' in judges
    figures = _section_html(page, "figures")
    assert 'alt="judge_prompts"' not in figures  # shown once, in its section
    assert len(re.findall(r'<img alt="judge_prompts"', page)) == 1
