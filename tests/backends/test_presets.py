"""make_backend: presets, dict specs, unknown keys, and the real local model (one small call)."""

from __future__ import annotations

import pytest

from lyra_lab import ConfigError
from lyra_lab.backends import Backend, FakeLLM, OpenAIBackend, SimulatedServer, make_backend


@pytest.fixture
def openai_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")


def test_openai_preset(openai_key):
    backend = make_backend("openai/gpt-4o-mini")
    assert isinstance(backend, OpenAIBackend)
    c = backend.config
    assert (c.name, c.base_url, c.model) == ("openai", "https://api.openai.com/v1", "gpt-4o-mini")
    assert c.api_key_env == "OPENAI_API_KEY"
    assert c.price().known and c.price().input_per_m == 0.15
    assert c.params["temperature"] == 0 and not c.simulated


@pytest.mark.parametrize("spec, base_url, model", [
    ("ollama/llama3.2:1b", "http://127.0.0.1:11434/v1", "llama3.2:1b"),
    ("vllm/Qwen/Qwen2.5-0.5B-Instruct", "http://127.0.0.1:8000/v1", "Qwen/Qwen2.5-0.5B-Instruct"),
    ("llamacpp/http://127.0.0.1:8080", "http://127.0.0.1:8080/v1", "default"),
    ("llamacpp/http://10.0.0.5:8080/v1", "http://10.0.0.5:8080/v1", "default"),
])
def test_self_hosted_presets_need_no_key_and_cost_nothing(spec, base_url, model, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    backend = make_backend(spec)
    assert (backend.config.base_url, backend.model, backend.config.api_key_env) == (base_url, model, None)
    assert backend.config.price().cost(1000, 1000) == 0.0 and backend.config.price().known


def test_dict_overrides_a_preset_and_merges_params(openai_key):
    backend = make_backend({"preset": "openai/gpt-4.1-nano", "max_concurrency": 16, "params": {"seed": 7}})
    assert backend.config.max_concurrency == 16
    assert dict(backend.config.params) == {"temperature": 0, "seed": 7}


def test_explicit_dict_form():
    backend = make_backend({"name": "lmstudio", "base_url": "http://127.0.0.1:1234/v1", "model": "phi-3",
                            "price_in_per_m": 0, "price_out_per_m": 0, "stream": False})
    assert (backend.name, backend.model, backend.config.stream) == ("lmstudio", "phi-3", False)
    assert isinstance(backend, Backend)
    assert make_backend(backend) is backend
    fake = FakeLLM()
    assert make_backend(fake) is fake


@pytest.mark.parametrize("spec, problem", [
    ({"preset": "openai/gpt-4o", "temprature": 0}, "unknown key 'temprature'"),
    ({"name": "x", "base_url": "http://h/v1", "model": "m", "colour": 1}, "unknown key 'colour'"),
    ({"preset": "ollama/x", "model_path": "models/m.gguf"}, "unknown key 'model_path'"),
    ("bedrock/claude", "unknown backend preset 'bedrock/claude'"),
    ("ollama/", "needs a model"),
    ("simulated", "needs base_url"),
    (42, "preset name or a mapping"),
])
def test_bad_specs_say_what_is_wrong(spec, problem, openai_key):
    with pytest.raises(ConfigError, match=problem):
        make_backend(spec)


def test_simulated_preset_labels_completions():
    with SimulatedServer(model="sim-x") as server:
        backend = make_backend({"preset": "simulated", "base_url": server.base_url})
        completion = backend.complete([{"role": "user", "content": "Frank sings. He sings badly."}])
    assert completion.simulated and completion.backend == "simulated"
    assert completion.meta["response_model"] == "sim-x"


@pytest.mark.slow
def test_local_preset_on_the_real_smollm2(local_server):
    backend = make_backend("local")
    assert backend.config.max_concurrency == 1 and backend.config.params["repeat_penalty"] == 1.3
    completion = backend.complete([{"role": "user", "content": "Name one colour."}], max_tokens=8)
    assert backend.config.base_url == local_server.base_url  # the first call attached to the shared server
    assert completion.text.strip()
    assert completion.usage.estimated is False  # the server's own usage (not streamed)
    assert 0 < completion.usage.completion_tokens <= 8 and completion.usage.prompt_tokens > 5
    assert completion.usage.cost_usd == 0.0 and not completion.simulated


@pytest.mark.slow
def test_local_preset_streaming_counts_with_the_model_tokenizer(local_server):
    backend = make_backend({"preset": "local", "stream": True})
    completion = backend.complete([{"role": "user", "content": "Name one colour."}], max_tokens=8)
    assert completion.ttft_s is not None and completion.ttft_s <= completion.latency_s
    assert completion.usage.estimated is True  # llama.cpp streams no usage
    assert completion.usage.completion_tokens == len(local_server.tokenize(completion.text))
