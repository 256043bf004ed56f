"""lyra-lab serve-memory: a configured pipeline over HTTP as a real process (the same hits as in
process, stopped by SIGTERM), and one-line errors for a bad config."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import lyra_lab
from lyra_lab.backends import HashingEmbedder
from lyra_lab.systems import HttpSystem, PipelineSystem, run_system

REPO = Path(__file__).resolve().parents[2]
CONFIG = """
embedder = "hashing"
recaller = "dense"
[pipeline]
chunker = {name = "turn_window", max_turns = 2}
"""


def _cli(*args, **kw):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen([sys.executable, "-m", "lyra_lab.cli", "serve-memory", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, **kw)


def test_serve_memory_over_http_answers_as_the_pipeline_in_process(tmp_path):
    config = tmp_path / "serve.toml"
    config.write_text(CONFIG, encoding="utf-8")
    corpus = lyra_lab.load(REPO / "datasets" / "synthetic_small.jsonl")
    conv = corpus.conversations[1]
    probes = [p for p in corpus.probes if p.conversation_id == conv.id][:8]
    server = _cli(str(config), "--http")
    try:
        line = server.stdout.readline()
        assert line.startswith("lyra-lab serve-memory: pipeline:turn_window+dense on http://127.0.0.1:"), line
        url = line.split()[-1]
        served = run_system(HttpSystem(url=url), conv, probes, k=5)
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
    assert server.returncode == 0 and "stopped" in out, err
    here = run_system(PipelineSystem(pipeline={"chunker": {"name": "turn_window", "max_turns": 2}}, recaller="dense"),
                      conv, probes, k=5, embedder=HashingEmbedder())
    assert [a.hits for a in served.probes] == [a.hits for a in here.probes]


def test_a_bad_config_is_one_line(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text(textwrap.dedent("""
        recaller = "bm26"
    """), encoding="utf-8")
    proc = _cli(str(config), "--http")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and err.count("\n") == 1, err
    assert err.startswith(f"error: {config}: ") and "unknown recaller 'bm26'" in err and "did you mean 'bm25'" in err
    config.write_text('[pipeline]\nchunker = "turn_window"\nflavour = 1\n', encoding="utf-8")
    proc = _cli(str(config), "--mcp")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "pipeline: unknown key 'flavour'" in err and err.count("\n") == 1, err
