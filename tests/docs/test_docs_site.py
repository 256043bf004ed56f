"""The documentation site builds offline with ``mkdocs build --strict`` and has the pages it promises.

The build (~15 s on 2 cores) runs in a temp folder; strict mode turns every warning into a
failure (a broken link, a docstring mkdocstrings cannot read, a notebook that does not convert).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    missing = [m for m in ("mkdocs", "material", "mkdocstrings_handlers.python", "mkdocs_jupyter")
               if importlib.util.find_spec(m.split(".")[0]) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (pip install 'lyra-lab[docs]')")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (REPO / ".cache").exists()  # nothing written into the checkout
    return out


def test_every_promised_page_is_built(site):
    for page in ("index.html", "getting-started/index.html", "experiment-file/index.html",
                 "architecture/index.html", "api/lyra_lab.datasets/index.html", "api/lyra_lab.corpus/index.html"):
        assert (site / page).is_file(), page
    notebooks = sorted(p.stem for p in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert len(notebooks) == 9
    for stem in notebooks:  # one use-case page per notebook, its source cells on it
        html = (site / "notebooks" / stem / "index.html").read_text(encoding="utf-8")
        assert "lyra_lab" in html, stem


def test_the_api_pages_come_from_the_docstrings(site):
    html = (site / "api" / "lyra_lab.datasets" / "index.html").read_text(encoding="utf-8")
    import lyra_lab.datasets as datasets

    for name in datasets.__all__:
        assert name in html, name
    assert ":func:" not in html and ":class:" not in html  # Sphinx roles read as code
    first_line = datasets.install.__doc__.splitlines()[0].split("``")[0]
    assert first_line.strip() in html


def test_the_site_fetches_nothing_from_the_network(site):
    external = set()
    for page in site.rglob("*.html"):
        for url in re.findall(r"<(?:script|link|img)[^>]*(?:src|href)=\"(https?://[^\"]+)", page.read_text("utf-8")):
            external.add(url)
    assert not external, sorted(external)[:10]  # no web fonts, no CDN scripts or styles
