"""A backend of the user's own, injected by label, runs a grid like any preset: no special case for fakes."""

from __future__ import annotations

import json

from lyra_lab.backends import Capabilities, Completion, Usage
from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment


class Shouter:
    """Not a FakeLLM and not a subclass of anything lyra-lab ships: just the protocol's four members."""

    name = "shouter"
    model = "upper-1"
    capabilities = Capabilities(identity={"backend": "shouter", "model": "upper-1"}, simulated=False)

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, messages, **params):
        self.calls += 1
        text = messages[-1]["content"].upper()[:40]
        return Completion(text=text, usage=Usage(prompt_tokens=2, completion_tokens=3, calls=1), latency_s=0.0,
                          backend=self.name, model=self.model)


def test_an_injected_backend_runs_a_grid_with_its_label_and_its_own_simulated_flag(write_toml, registries,
                                                                                     tmp_path):
    text = open(write_toml()).read().replace('backends = ["fake"]', 'backends = ["mine"]')
    text = text.replace('summarizers = ["concat", "per_chunk"]', 'summarizers = ["concat"]')
    text = text.replace('cache = "off"', 'cache = "run"')  # through the response cache, keyed by its identity
    spec = ExperimentSpec.from_toml(write_toml(text), registries)
    shouter = Shouter()
    df = run_experiment(spec, tmp_path / "run", None, Injected(backends={"mine": shouter}))

    assert set(df["backend"]) == {"mine"} and shouter.calls > 0
    assert not df["simulated"].any()  # its completions say they are real; nothing second-guesses that
    calls = df[df["metric"] == "summarize.calls"].drop_duplicates("cell_id")["value"].sum()
    assert calls > shouter.calls  # two chunkers ask some identical questions: the cache answered those
    done = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()
            if '"run_done"' in line]
    assert done[-1]["backends"]["mine"] == {"backend": "shouter", "model": "upper-1", "response_cache": True}


def test_the_fake_preset_runs_without_injection_and_is_labelled_simulated(write_toml, registries, tmp_path):
    spec = ExperimentSpec.from_toml(write_toml(), registries)  # backends = ["fake"], nothing injected
    df = run_experiment(spec, tmp_path / "run")
    assert set(df["backend"]) == {"fake"} and df["simulated"].all()
