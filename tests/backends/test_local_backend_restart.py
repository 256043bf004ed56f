"""The local preset survives its server going away (another process stopping the one we attached to)."""

import shutil

import pytest

from lyra_lab.backends import BackendError, make_backend
from lyra_lab.backends._local_backend import LocalBackend
from lyra_lab.backends._local_process import bundled_model_path
from lyra_lab.backends._local_server import ensure_local_server

pytestmark = pytest.mark.slow


@pytest.fixture
def private_gguf(tmp_path):
    # A copy of the bundled model gets its own shared server, so stopping it
    # leaves the session's `local_server` fixture alone.
    path = tmp_path / "smollm2-copy.gguf"
    shutil.copyfile(bundled_model_path(), path)
    yield str(path)
    server = ensure_local_server(str(path))
    server.stop()


def test_a_call_after_the_server_stopped_restarts_it_and_succeeds(private_gguf):
    backend = make_backend({"preset": "local", "model_path": private_gguf})
    assert isinstance(backend, LocalBackend)
    backend.start()  # as the first call does
    first = ensure_local_server(private_gguf)
    old_url = backend.config.base_url
    assert old_url == first.base_url
    first.stop()  # as when the process that owned the server exits mid-run
    assert not first.running()

    answer = backend.complete([{"role": "user", "content": "Say hello."}], max_tokens=4)

    assert answer.usage.completion_tokens > 0 and not answer.usage.estimated
    assert backend.restarts == 1
    assert backend.config.base_url != old_url
    assert backend.config.base_url == ensure_local_server(private_gguf).base_url


def test_an_http_error_from_a_live_server_is_not_a_restart(private_gguf):
    backend = make_backend({"preset": "local", "model_path": private_gguf})
    backend.start()
    url = backend.config.base_url
    # A context far beyond the model's window: the live server answers with an HTTP error.
    with pytest.raises(BackendError) as info:
        backend.complete([{"role": "user", "content": "word " * 20000}], max_tokens=4)
    assert info.value.status is not None
    assert backend.restarts == 0 and backend.config.base_url == url
