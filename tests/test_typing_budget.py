"""The ``Any`` budget of ``lyra_lab/``: annotations typed ``Any`` stay at most ``ANY_BUDGET``.

The project counts them as issue 42 does, one per source line::

    grep -rnE '(: Any|-> Any)( |,|\\)|$|=|:)' lyra_lab --include=*.py | wc -l

``any_annotations`` is that count in Python (the same pattern, line by line, over every
``*.py`` below a folder), so the budget test needs no shell.  A value only passed through or
printed is ``object``; a backend is ``Backend``; a module is ``ModuleType``: a new ``Any``
beyond the budget fails here, naming the files that hold the most.  The last tests point the
counter at small planted trees to show that it counts what grep counts and that the budget
can fail.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "lyra_lab"

#: the most ``Any`` annotations ``lyra_lab/`` may hold (issue 42: 67 then, 47 at wave 3; 28 since)
ANY_BUDGET = 50

#: grep -E '(: Any|-> Any)( |,|\)|$|=|:)', as issue 42 counts
ANY_ANNOTATION = re.compile(r"(: Any|-> Any)( |,|\)|$|=|:)")


def any_annotations(root: Path) -> Counter[str]:
    """Lines with an ``Any`` annotation per ``*.py`` file below ``root`` (paths relative to ``root``'s parent)."""
    found: Counter[str] = Counter()
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        hits = sum(1 for line in text.splitlines() if ANY_ANNOTATION.search(line))
        if hits:
            found[path.relative_to(root.parent).as_posix()] = hits
    return found


def over_budget(found: Counter[str], budget: int) -> str | None:
    """None within ``budget``, else one message: the count, the budget and the files holding the most."""
    total = sum(found.values())
    if total <= budget:
        return None
    worst = ", ".join(f"{name} ({n})" for name, n in found.most_common(5))
    return (f"{total} Any annotations in lyra_lab/, over the budget of {budget}; type them "
            f"(object, a Protocol, a TypedDict, a union); most in: {worst}")


def test_lyra_lab_stays_within_its_any_budget():
    found = any_annotations(ROOT)
    assert sum(found.values()) > 0, f"no Python files counted under {ROOT}"  # the walk found the package
    problem = over_budget(found, ANY_BUDGET)
    assert problem is None, problem


def test_the_counter_counts_lines_as_grep_does(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text(
        "from typing import Any\n"
        "def f(x: Any, y: Any) -> Any:\n"  # one line, one count (grep counts lines)
        "    z: Any = x\n"
        "    return z\n"
        "def g(**kw: Any) -> dict[str, Any]:\n"
        "    w: Any\n",
        encoding="utf-8")
    (pkg / "sub" / "b.py").write_text(
        "from typing import Any\n"
        "def h(v: Anything, u: dict[str, Any]) -> list[Any]:\n"  # no bare Any annotation here
        "    return [v]\n"
        "def k(v) -> Any:\n",
        encoding="utf-8")
    (pkg / "notes.txt").write_text("x: Any\n", encoding="utf-8")  # not a Python file
    assert any_annotations(pkg) == Counter({"pkg/a.py": 4, "pkg/sub/b.py": 1})


def test_the_budget_fails_past_its_cap_and_names_the_worst_files():
    found = Counter({"lyra_lab/a.py": 30, "lyra_lab/b.py": 15, "lyra_lab/c.py": 6})
    assert over_budget(found, 51) is None
    problem = over_budget(found, 50)
    assert problem is not None
    assert problem.startswith("51 Any annotations in lyra_lab/, over the budget of 50")
    assert "lyra_lab/a.py (30), lyra_lab/b.py (15), lyra_lab/c.py (6)" in problem
