"""``plan(spec)``: the model work a grid with summaries, rollups, answers and judges will do, before it runs.

The measured side is the run's own rows (each cell's summarize/rollup phase once, every recaller's
answer and judge phases), so the plan is checked against what a real run reports, not against itself.
"""

from __future__ import annotations

import io
import json
import sys

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.experiments import ExperimentSpec, forecast_text, plan, run_experiment

GRID = """
name = "planned"
[corpus]
path = "tiny.jsonl"
[grid]
chunkers = [{ name = "turn_window", max_turns = 2 }, { name = "token_budget", max_tokens = 30 }]
summarizers = ["single_pass", "map_reduce", "refine"]
rollups = ["none", { name = "summary_buffer" }]
budgets = [60]
recallers = ["bm25", "hybrid"]
[run]
backends = ["fake"]
embedders = ["hashing"]
ks = [1, 3]
cache = "off"
[qa]
enabled = true
max_probes = 2
judges = [{ prompt = "correct_wrong_v1", backend = "fake" }]
"""

ONCE_PER_CELL = ("summarize", "rollup")  # phases every recaller's rows repeat
PER_RECALLER = ("answer", "judge", "judge_control")  # judge controls: on the first recaller's rows


def measured(df) -> dict[str, tuple[int, int, int]]:
    """cell id -> (calls, prompt tokens, completion tokens) as the run's rows report them."""
    out: dict[str, tuple[int, int, int]] = {}
    for cell_id, rows in df.groupby("cell_id"):
        total = [0, 0, 0]
        for i, what in enumerate(("calls", "prompt_tokens", "completion_tokens")):
            for phase in ONCE_PER_CELL:
                values = rows.loc[rows["metric"] == f"{phase}.{what}", "value"]
                assert values.nunique() <= 1  # the same figures on every recaller's rows
                total[i] += int(values.iloc[0]) if len(values) else 0
            for phase in PER_RECALLER:
                total[i] += int(rows.loc[rows["metric"] == f"{phase}.{what}", "value"].sum())
        out[str(cell_id)] = (total[0], total[1], total[2])
    return out


def test_plan_matches_the_runs_calls_and_tokens_exactly_on_an_in_process_backend(write_toml, tmp_path,
                                                                               monkeypatch):
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "user-cache"))
    spec = ExperimentSpec.from_toml(write_toml(GRID))
    forecast = plan(spec)
    df = run_experiment(spec, tmp_path / "run")
    aliases = {e["cell_id"] for e in _events(tmp_path / "run") if e["event"] == "alias"}  # rows copied, not run
    real = {cell: work for cell, work in measured(df).items() if cell not in aliases}
    assert forecast.todo == len(real) and forecast.todo > 8
    assert sum(c for c, _, _ in real.values()) > 50  # summaries, rollups, answers and judges all called
    for cell in forecast.per_cell:
        assert cell.calls.exact and cell.prompt_tokens.exact and cell.completion_tokens.exact
        assert (cell.calls.low, cell.prompt_tokens.low, cell.completion_tokens.low) == real[cell.cell_id], cell.pipeline
    fake = next(b for b in forecast.backends if b.label == "fake")
    assert fake.calls.low == sum(c for c, _, _ in real.values())
    controls = df[df["metric"].isin(["judge_tpr", "judge_fpr"]) & df["cell_id"].isin(list(real))]
    assert forecast.judge_controls is not None and forecast.judge_controls.calls == len(controls) > 0
    assert fake.local and forecast.remote == [] and forecast.cost_usd.high == 0.0


def test_plan_counts_texts_to_embed_and_then_the_shared_cache_holds_them(write_toml, tmp_path, monkeypatch):
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "user-cache"))
    grid = GRID.split("[qa]")[0].replace('cache = "off"', 'cache = "run"')
    spec = ExperimentSpec.from_toml(write_toml(grid))
    before = plan(spec)
    hashing = next(e for e in before.embedders if e.label == "hashing")
    # the plan's calibration measured on the run's own texts, through the shared cache: those are cached now
    assert hashing.texts > hashing.cached > 0 and hashing.to_embed == hashing.texts - hashing.cached
    df = run_experiment(spec, tmp_path / "run")
    stats = _run_done(tmp_path / "run")["embeddings"]
    misses, hits = sum(e["misses"] for e in stats), sum(e["hits"] for e in stats)
    assert len(df) and misses == hashing.to_embed  # summaries are the fake's: the same texts both times
    assert hits >= hashing.cached  # the calibration's vectors, read back instead of embedded again
    after = next(e for e in plan(spec, tmp_path / "other").embedders if e.label == "hashing")
    assert after.cached == after.texts == hashing.texts and after.to_embed == 0


def _events(run_dir) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "log.jsonl").read_text(encoding="utf-8").splitlines()]


def _run_done(run_dir) -> dict:
    return next(e for e in reversed(_events(run_dir)) if e["event"] == "run_done")


def test_forecast_text_names_cells_embedders_backends_and_where_text_goes(write_toml, tmp_path, monkeypatch):
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "user-cache"))
    text = forecast_text(plan(ExperimentSpec.from_toml(write_toml(GRID))))
    assert "plan of planned:" in text and "embedder hashing:" in text and "backend fake (fake-llm):" in text
    assert "conversation text stays on this machine" in text and "wall time on this machine:" in text


def test_stand_in_plan_brackets_a_backend_that_sends_text_away(write_toml, tmp_path, monkeypatch):
    """A remote backend is never called by plan: a stand-in counts its calls, low-high where outputs matter."""
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "user-cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    grid = GRID.replace('backends = ["fake"]', 'backends = ["openai/gpt-4o-mini"]').replace(
        'backend = "fake"', 'backend = "openai/gpt-4o-mini"')
    forecast = plan(ExperimentSpec.from_toml(write_toml(grid)))
    openai = next(b for b in forecast.backends if b.label == "openai/gpt-4o-mini")
    assert not openai.local and openai.endpoint == "https://api.openai.com/v1"
    assert forecast.remote == ["https://api.openai.com/v1"]
    assert openai.calls.low > 50 and openai.completion_tokens.low < openai.completion_tokens.high
    assert 0 < openai.cost_usd.low < openai.cost_usd.high and openai.rates.assumed
    assert "sk-test" not in json.dumps(forecast.to_dict(), default=str)
    single = [c for c in forecast.per_cell if "single_pass+none" in c.pipeline]
    assert single and all(c.calls.exact for c in single)  # one call a window, whatever the model writes


def test_confirm_keys_are_validated(write_toml):
    with pytest.raises(ConfigError, match=r"\[run\] confirm_above_usd must be a number"):
        ExperimentSpec.from_toml(write_toml(GRID.replace("[run]\n", '[run]\nconfirm_above_usd = "lots"\n')))
    spec = ExperimentSpec.from_toml(write_toml(GRID.replace("[run]\n", "[run]\nconfirm_above_minutes = 0.5\n")))
    assert spec.confirm_above_minutes == 0.5 and "confirm_above_minutes" not in spec.to_dict()


def test_run_off_a_terminal_stops_with_one_line_above_the_threshold_and_goes_on_with_yes(
        write_toml, tmp_path, monkeypatch, capsys):
    from lyra_lab.cli import main

    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "user-cache"))
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # not a terminal: nobody to answer
    path = write_toml(GRID.replace("[run]\n", "[run]\nconfirm_above_minutes = 0\n"))
    code = main(["run", str(path), "--run-dir", str(tmp_path / "r"), "--no-report", "--quiet"])
    err = capsys.readouterr().err
    assert code != 0 and "not starting a run above the confirm threshold: pass --yes" in err
    assert "Traceback" not in err and not (tmp_path / "r").exists()
    code = main(["run", str(path), "--run-dir", str(tmp_path / "r"), "--no-report", "--quiet", "--yes"])
    assert code == 0 and "plan of planned:" in capsys.readouterr().out
    assert any(e["event"] == "plan" and e["todo"] > 0 for e in _events(tmp_path / "r"))


@pytest.mark.parametrize("no_plan", [[], ["--no-plan"]])
def test_run_off_a_terminal_does_not_send_text_to_a_remote_endpoint_without_yes(write_toml, tmp_path, monkeypatch,
                                                                                capsys, no_plan):
    from lyra_lab.cli import main

    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "user-cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    path = write_toml(GRID.replace('backends = ["fake"]', 'backends = ["openai/gpt-4o-mini"]'))
    code = main(["run", str(path), "--run-dir", str(tmp_path / "r"), "--quiet", *no_plan])
    err = capsys.readouterr().err
    assert code != 0 and "not sending conversation text to https://api.openai.com/v1: pass --yes to agree" in err
    assert "notice: this run sends conversation text of" in err and "sk-test" not in err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("summarizer, dry_runs", [("none", 1), ("single_pass", 2)])
def test_a_second_dry_run_with_long_replies_only_where_a_cell_asks_a_stand_in(write_toml, monkeypatch, summarizer,
                                                                                dry_runs):
    """A server's replies are stood in short, then long; a grid that sends it nothing needs one dry run."""
    from lyra_lab.experiments.forecast import _forecast

    grid = f"""
    name = "one-dry-run"
    [corpus]
    path = "tiny.jsonl"
    [grid]
    chunkers = [{{ name = "turn_window", max_turns = 1 }}]
    summarizers = ["{summarizer}"]
    recallers = ["bm25"]
    [run]
    backends = ["llamacpp/http://127.0.0.1:9/v1"]
    embedders = ["none"]
    ks = [1]
    cache = "off"
    """
    replies = []
    real = _forecast.dry_run

    def counted(setup, todo, corpus, models, reply):
        replies.append(reply)
        return real(setup, todo, corpus, models, reply)

    monkeypatch.setattr(_forecast, "dry_run", counted)
    forecast = plan(ExperimentSpec.from_toml(write_toml(grid)), measure=False)
    assert len(replies) == dry_runs and forecast.todo == 2  # one cell a conversation
    server = next(b for b in forecast.backends)
    assert (server.calls.low > 0) == (summarizer != "none")
