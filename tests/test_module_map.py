"""docs/architecture.md names every module of lyra_lab, in the words of its docstring."""

from __future__ import annotations

from pathlib import Path

from lyra_lab._module_map import ROOT, first_sentence, module_doc, package_modules, with_map

PAGE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def test_the_module_map_is_current():
    page = PAGE.read_text(encoding="utf-8")
    assert page == with_map(page), "docs/architecture.md's module map is stale: run " \
                                   "`python -m lyra_lab._module_map docs/architecture.md`"


def test_every_module_has_a_docstring_and_a_line():
    page = PAGE.read_text(encoding="utf-8")
    files = [path for paths in package_modules().values() for path in paths]
    assert len(files) > 100
    missing = [str(path.relative_to(ROOT)) for path in files if not module_doc(path)]
    assert not missing, f"modules without a docstring: {missing}"
    for path in files:
        if path.name != "__init__.py":
            assert f"- `{path.stem}` — {first_sentence(module_doc(path))}" in page


def test_first_sentence_stops_at_a_full_stop_not_at_an_abbreviation():
    assert first_sentence("Reads files, e.g. JSONL. Then more.") == "Reads files, e.g. JSONL."
    assert first_sentence("One line\nwrapped.\n\nSecond paragraph.") == "One line wrapped."
    assert first_sentence("No stop at all") == "No stop at all"
