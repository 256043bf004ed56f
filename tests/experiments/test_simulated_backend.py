"""A cloud-like backend (the simulated OpenAI-compatible server) through the runner: labelled, seeded, no secrets."""

from __future__ import annotations

import json

from lyra_lab.backends import SimulatedServer
from lyra_lab.experiments import ExperimentSpec, run_experiment

SECRET = "sk-test-SECRET-123"


def test_a_simulated_backend_run_is_labelled_seeded_and_writes_no_secret(write_toml, registries, tmp_path,
                                                                       monkeypatch):
    monkeypatch.setenv("LYRA_TEST_API_KEY", SECRET)
    with SimulatedServer(latency_s=0.0) as server:
        text = open(write_toml()).read().replace(
            'backends = ["fake"]',
            f'backends = [{{ preset = "simulated", base_url = "{server.base_url}", '
            f'api_key_env = "LYRA_TEST_API_KEY" }}]\nseeds = [7]').replace('cache = "off"', 'cache = "run"')
        text = text.replace('summarizers = ["concat", "per_chunk"]', 'summarizers = ["concat"]')
        spec = ExperimentSpec.from_toml(write_toml(text), registries)
        df = run_experiment(spec, tmp_path / "run")
        chats = server.chat_log()
    assert df["simulated"].all() and set(df["backend"]) == {"simulated"} and set(df["seed"]) == {7}
    calls = df[df["metric"] == "summarize.calls"].drop_duplicates("cell_id")["value"].sum()
    assert calls > 0 and len(chats) <= calls  # identical prompts of two pipelines come from the cache
    assert all(r.params.get("seed") == 7 for r in chats)  # the cell's seed reached the server
    assert all(r.has_auth for r in chats)
    tokens = df[df["metric"] == "summarize.prompt_tokens"]["value"]
    assert (tokens > 0).all()  # the server's own usage figures
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    saved = json.loads((tmp_path / "run" / "spec.json").read_text())
    assert saved["backends"][0]["api_key_env"] == "LYRA_TEST_API_KEY"  # the variable's name, never its value
