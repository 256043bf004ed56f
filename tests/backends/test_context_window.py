"""``context_window(spec)``: the answering model's window by preset, a spec's own ``context_window``, bad values."""

from __future__ import annotations

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import DEFAULT_N_CTX, FakeLLM, check_backend_spec, context_window, make_backend


@pytest.mark.parametrize(("spec", "window"), [
    ("local", DEFAULT_N_CTX),  # the local server's n_ctx, which lyra-lab starts it with
    ("fake", DEFAULT_N_CTX),  # stands in for the local model
    ("openai/gpt-4o-mini", 128_000),
    ({"preset": "openai/gpt-4o", "max_concurrency": 2}, 128_000),
    ("simulated", 128_000),
    ("ollama/llama3.2", 4_096),
    ("vllm/qwen", 4_096),
    ({"name": "mine", "base_url": "http://127.0.0.1:9/v1", "model": "m"}, 4_096),
])
def test_each_preset_has_its_window(spec, window):
    assert context_window(spec) == window


def test_a_specs_own_window_wins_over_its_presets():
    assert context_window({"preset": "local", "context_window": 2048}) == 2048
    assert context_window({"preset": "openai/gpt-4.1", "context_window": 1_047_576}) == 1_047_576
    assert context_window({"preset": "ollama/llama3.2", "context_window": 32_768}) == 32_768


def test_a_built_backend_gives_its_own_window_or_the_local_servers():
    backend = FakeLLM()
    assert context_window(backend) == DEFAULT_N_CTX
    backend.context_window = 1234  # type: ignore[attr-defined]
    assert context_window(backend) == 1234


@pytest.mark.parametrize("bad", [0, -5, "4096", 2.5, True, None])
def test_a_bad_window_is_one_clear_line(bad):
    with pytest.raises(ConfigError) as caught:
        context_window({"preset": "ollama/llama3.2", "context_window": bad})
    message = str(caught.value)
    assert "context_window must be a positive integer" in message and repr(bad) in message and "\n" not in message


def test_the_local_window_cannot_pass_the_servers_n_ctx():
    with pytest.raises(ConfigError, match=f"above the local server's n_ctx {DEFAULT_N_CTX}"):
        context_window({"preset": "local", "context_window": DEFAULT_N_CTX + 1})


def test_backends_are_built_and_checked_with_the_key_and_refuse_a_bad_one():
    assert make_backend({"preset": "fake", "context_window": 512}).name == "fake"
    assert make_backend({"preset": "ollama/llama3.2", "context_window": 8192}).model == "llama3.2"
    check_backend_spec({"preset": "ollama/llama3.2", "context_window": 8192})
    for spec in ({"preset": "fake", "context_window": 0}, {"preset": "ollama/x", "context_window": "big"}):
        with pytest.raises(ConfigError, match="context_window must be a positive integer"):
            make_backend(spec)
        with pytest.raises(ConfigError, match="context_window must be a positive integer"):
            check_backend_spec(spec)
    with pytest.raises(ConfigError, match="above the local server's n_ctx"):
        check_backend_spec({"preset": "local", "context_window": 10**6}, installed=False)
