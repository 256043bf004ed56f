"""What a cell is and what it may reuse: each test joins two things that used to disagree.

* transport settings × resume: a backend's ``max_concurrency``, ``timeout_s`` and retry settings change
  how fast its answers come, not what they are, so tuning them and resuming a finished grid makes no
  call (it used to change every cell id and re-run the grid);
* two in-process backends × one response cache: two objects given under different labels with one name
  and model each get their own answers (the second used to get the first's from the cache);
* a strategy's needs × the grid: a recaller that needs an embedder at the ``"none"`` embedder is one
  line naming the key at ``plan`` and ``run`` (it used to end "failed unexpectedly: ValueError").
"""

from __future__ import annotations

import pytest

from lyra_lab.backends import FakeLLM, SimulatedServer
from lyra_lab.cli import main
from lyra_lab.experiments import ExperimentSpec, Injected, RunOptions, run_experiment

RUN = """
name = "identity"
[corpus]
path = "tiny.jsonl"
[grid]
chunkers = [{ name = "turn_window", max_turns = 2 }]
summarizers = ["none"]
recallers = ["bm25"]
[run]
embedders = ["none"]
ks = [1]
cache = "run"
[qa]
enabled = true
"""


def _spec(write_toml, backend: str) -> ExperimentSpec:
    return ExperimentSpec.from_toml(write_toml(RUN.replace("[run]\n", f"[run]\nbackends = [{backend}]\n")))


@pytest.mark.parametrize("tuned", ["max_concurrency = 4", "timeout_s = 7.5", "max_attempts = 2",
                                   "retry_base_s = 0.1"])
def test_tuning_a_backends_transport_and_resuming_a_finished_grid_makes_no_call(write_toml, tmp_path, tuned):
    with SimulatedServer(latency_s=0.0) as server:
        base = f'preset = "simulated", base_url = "{server.base_url}"'
        first = run_experiment(_spec(write_toml, f"{{ {base}, max_concurrency = 2 }}"), tmp_path / "run",
                               RunOptions(progress=False))
        sent = len(server.chat_log())
        assert sent > 0 and first.attrs["failed_cells"] == []
        again = run_experiment(_spec(write_toml, f"{{ {base}, {tuned} }}"), tmp_path / "run",
                               RunOptions(progress=False))
        assert len(server.chat_log()) == sent  # 0 calls: the finished cells are the same cells
    assert sorted(again["cell_id"].unique()) == sorted(first["cell_id"].unique())
    saved = (tmp_path / "run" / "spec.json").read_text(encoding="utf-8")
    assert tuned.split(" = ")[0] in saved  # the run's records keep the transport settings it ran with


def test_a_setting_that_changes_answers_still_makes_new_cells(write_toml, tmp_path):
    with SimulatedServer(latency_s=0.0) as server:
        base = f'preset = "simulated", base_url = "{server.base_url}"'
        first = run_experiment(_spec(write_toml, f"{{ {base} }}"), tmp_path / "run", RunOptions(progress=False))
        other = run_experiment(_spec(write_toml, f"{{ {base}, params = {{ temperature = 0.7 }} }}"),
                               tmp_path / "other", RunOptions(progress=False))
    assert set(other["cell_id"]).isdisjoint(set(first["cell_id"]))


def test_a_preset_name_keeps_its_cell_ids(write_toml, tmp_path):
    """Specs without transport settings hash as before, so a finished run does not re-run after an upgrade."""
    from lyra_lab.experiments.cells import grid_cells
    from lyra_lab.experiments.cells._cell import cell_id
    from lyra_lab.experiments.grid import load_corpus, vars_of

    spec = _spec(write_toml, '"fake"')
    corpus = load_corpus(spec.corpus)
    (cell,) = grid_cells(spec, corpus, "sha")[:1]
    conv = corpus.conversations[0]
    pipeline = spec.pipelines[0]
    from lyra_lab.replay import strategy_spec

    recallers = [{"label": label, **strategy_spec(r)} for label, r in spec.recallers]
    payload = {"corpus_sha256": "sha", "conversation_id": conv.id, "sessions": [s.id for s in conv.sessions],
               "probes": [p.id for p in corpus.probes_for(conv.id)], "backend": "fake", "embedder": "none",
               "seed": 0, "ks": [1], "qa": vars_of(spec.qa), "pipeline": pipeline.to_dict(), "recallers": recallers}
    assert cell.cell_id == cell_id(payload, conv.id)  # the payload as it was hashed before transport left it


def test_two_in_process_backends_with_one_name_get_their_own_answers(write_toml, tmp_path):
    spec = ExperimentSpec.from_toml(write_toml(RUN.replace("[run]\n", '[run]\nbackends = ["a", "b"]\n')))
    a = FakeLLM(respond=lambda m: "Biscuit")  # both are named "fake", model "fake-llm"
    b = FakeLLM(respond=lambda m: "no idea")
    df = run_experiment(spec, tmp_path / "run", RunOptions(progress=False), Injected(backends={"a": a, "b": b}))
    assert a.calls and b.calls  # b was asked, not answered from a's cache
    f1 = df[df["metric"] == "qa_f1"].groupby("backend")["value"].mean()
    assert f1["a"] > f1["b"] == 0.0  # b's own answers ("no idea") score 0


@pytest.mark.parametrize("command", ["plan", "run"])
def test_dense_at_the_none_embedder_is_one_line_naming_the_key(write_toml, tmp_path, capsys, command):
    path = write_toml(RUN.replace("[run]\n", '[run]\nbackends = ["fake"]\n').replace('"bm25"', '"dense"'))
    args = [command, str(path)] + (["--run-dir", str(tmp_path / "run")] if command == "run" else [])
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err and "failed unexpectedly" not in err, err
    assert err.startswith("error:") and "[run] embedders" in err and "recaller 'dense'" in err, err
    assert not (tmp_path / "run").exists()


def test_dense_at_the_none_embedder_is_a_config_error_from_the_api_too(write_toml):
    from lyra_lab._registry import ConfigError

    text = RUN.replace("[run]\n", '[run]\nbackends = ["fake"]\n').replace('"bm25"', '"bm25", "dense"')
    with pytest.raises(ConfigError, match=r"\[run\] embedders: .*recaller 'dense' needs one"):
        ExperimentSpec.from_toml(write_toml(text))
    embeds = text.replace('embedders = ["none"]', 'embedders = ["hashing"]')
    assert ExperimentSpec.from_toml(write_toml(embeds)).recallers  # with an embedder it is a grid
