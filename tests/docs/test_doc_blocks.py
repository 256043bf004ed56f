"""Every Python block of README.md and docs/*.md runs, and every TOML block loads, so the docs cannot drift from the code.

Blocks are found, not listed (``tests/docs/doc_blocks.py``): a page that gains a block is
tested with no edit here.  A page's Python blocks run in order, in one namespace, in a child
process (a block may register a strategy or a memory system process-wide), in a temp folder
that holds the repository's ``datasets/`` and ``examples/``, so a block reads
``datasets/synthetic_small.jsonl`` as a reader in a checkout would; ``file:``-marked blocks are
written there first, where the page shows them (a grid the page's Python then runs).  A TOML
block is an experiment file (loaded by ``ExperimentSpec``: a fragment of it, such as a
``[grid]`` table alone, on top of the bundled synthetic corpus) or a ``lyra-lab serve-memory``
config (loaded by ``load_serve_config``); one that is neither fails.  ``no-run`` marks are
counted (``NO_RUN``): adding one means editing this file, in the same commit, with its reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from lyra_lab.experiments import TABLES, ExperimentSpec
from lyra_lab.systems import load_serve_config
from tests.docs.doc_blocks import REPO, Block, blocks, pages

#: page -> how many of its blocks are marked ``<!-- no-run: reason -->`` (the reason is on the page)
NO_RUN: dict[str, int] = {
    "README.md": 1,  # the tour's Python, after its commands made planted.jsonl: run by test_readme_tour.py
    "docs/getting-started.md": 1,  # the same, in getting-started's tour: run by test_readme_tour.py
}

ALL = [b for page in pages() for b in blocks(page)]
RUN = [b for b in ALL if b.no_run is None]
PYTHON_PAGES = sorted({b.page for b in RUN if b.language == "python" and b.file is None})
TOML = [b for b in RUN if b.language == "toml"]

# The child: writes file blocks and runs the page's Python blocks in order, in one namespace; a failing
# block's traceback names the page and line (each block is compiled under its page:line).
CHILD = r"""
import json, runpy, sys
from pathlib import Path
namespace = {"__name__": "__main__"}
for step in json.loads(Path(sys.argv[1]).read_text(encoding="utf-8")):
    if step["file"]:
        Path(step["file"]).write_text(step["text"], encoding="utf-8")
        if step["file"].endswith(".py"):
            runpy.run_path(step["file"], run_name=Path(step["file"]).stem)
    elif step["language"] == "python":
        print(f"--- {step['where']}", file=sys.stderr, flush=True)
        exec(compile(step["text"], step["where"], "exec"), namespace)
"""


def _folder(tmp_path: Path) -> Path:
    for name in ("datasets", "examples"):
        (tmp_path / name).symlink_to(REPO / name)
    return tmp_path


def test_the_marks_that_keep_a_block_from_running_are_counted():
    marked: dict[str, int] = {}
    for block in ALL:
        if block.no_run is not None:
            assert block.no_run, f"{block.where}: a no-run mark says why (<!-- no-run: reason -->)"
            marked[block.page] = marked.get(block.page, 0) + 1
    assert marked == NO_RUN, "a no-run mark was added or removed: update NO_RUN with its reason"


def test_blocks_are_found_where_the_pages_have_them():
    """The finder sees the blocks (a page's fence style it cannot read would make the other tests vacuous)."""
    found = {(b.page, b.language) for b in ALL}
    assert ("README.md", "python") in found and ("docs/architecture.md", "python") in found
    assert ("docs/experiment-file.md", "toml") in found and ("docs/memory-systems.md", "toml") in found
    for page in pages():
        fences = sum(1 for line in page.read_text(encoding="utf-8").splitlines()
                     if line.strip().startswith("```"))
        assert fences == 2 * len(blocks(page)), f"{page.name}: unbalanced fences"


@pytest.mark.parametrize("page", PYTHON_PAGES)
def test_the_python_blocks_of_a_page_run(page, tmp_path):
    steps = [{"where": b.where, "language": b.language, "file": b.file, "text": b.text}
             for b in RUN if b.page == page and (b.language == "python" or b.file)]
    folder = _folder(tmp_path)
    script = tmp_path / ".blocks.json"
    script.write_text(json.dumps(steps), encoding="utf-8")
    env = {**os.environ, "MPLBACKEND": "Agg",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", CHILD, str(script)], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, f"{page}: a block failed\n{done.stderr[-4000:]}"


@pytest.mark.parametrize("block", TOML, ids=[b.where for b in TOML])
def test_a_toml_block_is_an_experiment_file_or_a_serve_config_that_loads(block: Block, tmp_path):
    data = tomllib.loads(block.text)  # a TOMLDecodeError names the line
    folder = _folder(tmp_path)
    if set(data) & set(TABLES[""]):  # an experiment file, or a fragment of one (a [grid] table alone)
        data = {"corpus": {"path": "datasets/synthetic_small.jsonl"}, **data}
        spec = ExperimentSpec.from_dict(data, base_dir=folder)
        assert spec.pipelines or spec.systems, block.where
    else:  # a serve-memory config: its loader names an unknown key
        path = folder / (block.file or "serve.toml")
        path.write_text(block.text, encoding="utf-8")
        load_serve_config(path)
