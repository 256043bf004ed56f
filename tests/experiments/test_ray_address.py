"""``lyra-lab run --executor ray --address ADDR``: a grid joins a Ray cluster already running, gives the
serial rows, and leaves the cluster running.

The cluster is a real one: ``ray start --head --block`` on 127.0.0.1 (its own process group, stopped
by signalling that group, so a Ray other tests started is left alone).  The run joins it from a
subprocess, as a user's shell would, so no Ray initialized in this test process is reused.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from lyra_lab.cli import main
from tests.experiments.test_cli_run import EXPERIMENT
from tests.experiments.test_concurrent_cells import _rows
from tests.experiments.test_ray_executor import _events

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


@pytest.fixture
def ray_head():
    """``(process, "127.0.0.1:PORT", env)`` of a Ray head with 2 CPUs started by ``ray start``, stopped afterwards;
    ``env`` holds the head's own token, which a process joining it needs.

    Token authentication is on, as Ray starts clusters by default, with a token given in the environment
    rather than ``~/.ray/auth_token``, which local Rays of other tests may be creating at the same time.
    """
    port = _free_port()
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0",
           "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    env.pop("RAY_AUTH_TOKEN_PATH", None)
    head = subprocess.Popen(
        [str(Path(sys.executable).with_name("ray")), "start", "--head", "--block", "--node-ip-address", "127.0.0.1",
         "--port", str(port), "--num-cpus", "2", "--include-dashboard=false", "--disable-usage-stats"],
        env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        while not _accepts(port):
            if head.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"ray start --head did not come up on 127.0.0.1:{port} (exit {head.poll()})")
            time.sleep(0.5)
        yield head, f"127.0.0.1:{port}", env
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        head.wait(timeout=60)


@pytest.mark.slow
def test_a_grid_joins_a_running_cluster_by_address_gives_the_serial_rows_and_leaves_it_running(
        write_toml, tmp_path, ray_head):
    head, address, env = ray_head
    toml = write_toml(EXPERIMENT)
    assert main(["run", str(toml), "--run-dir", str(tmp_path / "serial"), "--quiet", "--no-report"]) == 0

    joined = subprocess.run(
        [sys.executable, "-m", "lyra_lab.cli", "run", str(toml), "--run-dir", str(tmp_path / "ray"), "--quiet",
         "--no-report", "--executor", "ray", "--address", address],
        capture_output=True, text=True, timeout=600, env={**env, "PYTHONPATH": str(REPO)})
    assert joined.returncode == 0, joined.stderr[-2000:]

    [cluster] = _events(tmp_path / "ray", "ray_started")
    assert cluster["address"] == address and cluster["nodes"] == ["127.0.0.1"] and cluster["cpus"] == 2
    assert cluster["started_by_run"] is False  # joined, not started
    assert len(_events(tmp_path / "ray", "ray_task")) == 12  # 16 cells, 4 of them aliases copied by the driver
    serial, on_ray = (pd.read_parquet(tmp_path / name / "results.parquet") for name in ("serial", "ray"))
    pd.testing.assert_frame_equal(_rows(serial).drop(columns="attempt"), _rows(on_ray).drop(columns="attempt"))
    assert head.poll() is None and _accepts(int(address.rsplit(":", 1)[1]))  # the run left the cluster running
    token = env["RAY_AUTH_TOKEN"].encode()
    assert not [p for p in (tmp_path / "ray").rglob("*") if p.is_file() and token in p.read_bytes()]  # a secret
