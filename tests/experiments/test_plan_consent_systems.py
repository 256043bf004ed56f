"""Plan × systems and consent × systems: a plan sends a memory service nothing and works while it is down;
consent names every place text can reach and, off a terminal without --yes, stops before the first request;
a system listening nowhere (or answering 500) fails its own cells and the other pipelines' rows are there."""

from __future__ import annotations

import json
import sys

import pytest

from lyra_lab.cli import main
from lyra_lab.experiments import ExperimentSpec, destinations, plan, cell_setup, grid_cells, remote_endpoints
from lyra_lab.experiments import load_corpus
from lyra_lab.experiments.forecast import conversation_controls
from lyra_lab.runs import load_results, read_log
from tests.experiments.memory_service import CountingService, free_port, non_loopback_address
from tests.systems.conftest import SYNTHETIC

PIPELINE = "turn_window+none+none|bm25"


def experiment(systems: list[object], **run: object) -> dict[str, object]:
    return {"name": "systems", "corpus": {"path": str(SYNTHETIC), "max_probes": 4},
            "grid": {"chunkers": [{"name": "turn_window", "max_turns": 1}], "keep_raw": [False],
                     "recallers": ["bm25"], "systems": systems},
            "run": {"backends": ["fake"], "embedders": ["hashing"], "ks": [1, 5], "cache": "off", **run},
            "qa": {"enabled": True, "max_probes": 2, "judges": [{"prompt": "correct_wrong_v1", "backend": "fake"}]}}


def toml_file(tmp_path, data: dict[str, object]):
    """``data`` as an experiment file (TOML written through JSON-compatible inline tables)."""
    def value(v: object) -> str:
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(v)

    lines = [f"name = {json.dumps(data['name'])}"]
    for table in ("corpus", "grid", "run", "qa"):
        lines.append(f"[{table}]")
        lines += [f"{k} = {value(v)}" for k, v in data[table].items()]  # type: ignore[union-attr]
    path = tmp_path / "exp.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_plan_sends_an_http_memory_service_no_request(tmp_path, capsys):
    with CountingService() as service:
        spec = ExperimentSpec.from_dict(experiment([{"name": "http", "url": service.url}]))
        forecast = plan(spec)
        assert main(["plan", str(toml_file(tmp_path, experiment([{"name": "http", "url": service.url}]))),
                     "--fresh"]) == 0
        assert service.total == 0, service.requests
    system_cells = [c for c in forecast.per_cell if c.pipeline.startswith("http:")]
    assert len(system_cells) == 2  # one per conversation, forecast from what the system declares
    # the answering stage and the judge are lyra-lab's own: forecast as for any cell (2 probes x answer + judge,
    # and the judge's controls of known truth for those probes)
    corpus = load_corpus(spec.corpus)
    for c in system_cells:
        controls = len(conversation_controls(spec, corpus, c.conversation_id))
        assert controls > 0 and c.calls.low == c.calls.high == 4 + controls, c
    assert [d.where for d in forecast.destinations if d.role == "service"] == [service.url]
    out = capsys.readouterr().out
    assert service.url.removeprefix("http://") in out and "on this machine" in out


def test_plan_works_while_the_memory_service_is_down(tmp_path, capsys):
    url = f"http://127.0.0.1:{free_port()}"
    assert main(["plan", str(toml_file(tmp_path, experiment([{"name": "http", "url": url}]))), "--fresh"]) == 0
    captured = capsys.readouterr()
    assert "plan of systems: 4 of 4 cells to run" in captured.out and "Traceback" not in captured.err


def test_a_system_listening_nowhere_fails_its_own_cells_and_the_run_exits_0(tmp_path, capsys):
    url = f"http://127.0.0.1:{free_port()}"
    run_dir = tmp_path / "run"
    assert main(["run", str(toml_file(tmp_path, experiment([{"name": "http", "url": url}]))),
                 "--run-dir", str(run_dir), "--quiet", "--no-report"]) == 0
    df = load_results(run_dir)
    assert set(df["pipeline"]) == {PIPELINE, f"http:{url.removeprefix('http://')}"}
    failed = df[df["metric"].str.startswith("failed.")]
    assert list(failed["metric"].unique()) == ["failed.open.unreachable"] and failed["cell_id"].nunique() == 2
    assert (failed["value"] == 1).all() and (failed["degraded"] == 1).all()  # counted, and marked degraded
    assert df.loc[df["pipeline"] == PIPELINE, "cell_id"].nunique() == 2  # the other pipeline's rows are all there
    events = list(read_log(run_dir / "log.jsonl"))
    assert sum(e["event"] == "cell_failed_for_good" for e in events) == 2
    from lyra_lab.reports import write_report

    summary = next(p for p in write_report(run_dir) if p.name == "summary.md").read_text(encoding="utf-8")
    assert "2 failed.open.unreachable" in summary and "--retry-failed" in summary  # the report counts and says so
    assert not any(e["event"] == "cell_failed" for e in events)


def test_a_service_answering_500_fails_its_own_cells_not_the_run(tmp_path, capsys):
    with CountingService(fail={"query": 500}) as service:
        run_dir = tmp_path / "run"
        code = main(["run", str(toml_file(tmp_path, experiment([{"name": "http", "url": service.url}]))),
                     "--run-dir", str(run_dir), "--quiet", "--no-report"])
    err = capsys.readouterr().err
    assert code == 1 and "unexpectedly" not in err and "Traceback" not in err, err
    assert "2 cell(s) failed; run the same command again to retry them" in err  # transient: retried next time
    df = load_results(run_dir)
    assert set(df["pipeline"]) == {PIPELINE}


def test_run_off_a_terminal_without_yes_sends_a_non_loopback_service_nothing(tmp_path, capsys, monkeypatch):
    address = non_loopback_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address to serve on")
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False, raising=False)
    with CountingService(host=address) as service:
        path = toml_file(tmp_path, experiment([{"name": "http", "url": service.url}]))
        code = main(["run", str(path), "--run-dir", str(tmp_path / "run"), "--quiet"])
        assert service.total == 0, service.requests
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[-1] == f"error: not sending conversation text to {service.url}: pass --yes to agree", err
    assert not (tmp_path / "run" / "rows").exists() or not list((tmp_path / "run" / "rows").iterdir())


def test_run_without_the_plan_asks_too(tmp_path, capsys, monkeypatch):
    """``--no-plan`` skips the forecast, not the consent: a service's URL stops the run the same way."""
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False, raising=False)
    url = "http://10.255.255.1:5000"  # nothing is sent: the run stops before any cell
    path = toml_file(tmp_path, experiment([{"name": "http", "url": url}]))
    assert main(["run", str(path), "--run-dir", str(tmp_path / "run"), "--quiet", "--no-plan"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == \
        f"error: not sending conversation text to {url}: pass --yes to agree"


def test_consent_names_every_place_text_can_reach(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    remote_embedder = {"name": "openai", "model": "e5", "base_url": "http://10.255.255.2:8000/v1", "api_key_env": None}
    spec = ExperimentSpec.from_dict({
        **experiment([{"name": "mem0", "infer": True}, {"name": "http", "url": "http://10.255.255.1:5000"},
                      {"name": "mcp"}, {"name": "served", "backend": "openai/gpt-4o-mini",
                                        "pipeline": {"chunker": {"name": "turn_window"},
                                                     "summarizer": {"name": "single_pass"}}}]),
        "run": {"backends": ["fake"], "embedders": [remote_embedder], "cache": "off"}})
    corpus = load_corpus(spec.corpus)
    cells = grid_cells(spec, corpus, "sha")
    reach = {(d.role, d.label): d for d in destinations(cells, cell_setup(spec, corpus.name))}
    assert not reach[("embedder", "openai/e5")].local  # the pipelines' and mem0's embedder
    assert reach[("service", "http://10.255.255.1:5000")].where == "http://10.255.255.1:5000"
    assert reach[("process", "npx -y @modelcontextprotocol/server-memory")].local  # named as the process
    assert ("process", "lyra-lab serve-memory --mcp") in reach
    assert not reach[("backend", "openai/gpt-4o-mini")].local  # what the served process builds
    _, remote = remote_endpoints(spec)
    assert {"http://10.255.255.2:8000/v1", "http://10.255.255.1:5000"} <= set(remote)
    assert any("openai.com" in r for r in remote), remote


def test_a_plan_of_mem0_starts_nothing_and_counts_its_declared_calls():
    spec = ExperimentSpec.from_dict(experiment([{"name": "mem0", "infer": True, "batch": 2}]))
    before = set(sys.modules)
    forecast = plan(spec)
    assert not any(m == "mem0" or m.startswith("mem0.") for m in set(sys.modules) - before)
    cells = [c for c in forecast.per_cell if c.pipeline == "mem0:infer"]
    assert len(cells) == 2
    for cell in cells:
        answering = 4  # 2 probes answered and judged
        # one extraction call per add() of 2 turns at least (a batch is cut at each probe, so a few more)
        assert cell.calls.low == cell.calls.high >= answering + cell.turns // 2
        # each carries mem0's extraction prompt: at least 7,606 tokens beyond the turns' text
        assert cell.prompt_tokens.low >= 7606 * (cell.turns // 2)
        assert cell.prompt_tokens.high > cell.prompt_tokens.low


def test_a_pipeline_system_runs_in_process_so_its_plan_counts_its_summaries(corpus_path):
    """lyra-lab's own pipeline as a system declares it runs in this process: the dry run runs it, so its
    summarizer's calls are counted as a pipeline cell's are (a plan of a service counts none of its own)."""
    pipe = {"chunker": {"name": "turn_window", "max_turns": 2}, "summarizer": {"name": "single_pass"}}
    spec = ExperimentSpec.from_dict({
        "name": "pipe", "corpus": {"path": str(corpus_path)},
        "grid": {"chunkers": [pipe["chunker"]], "summarizers": ["single_pass"], "recallers": ["bm25"],
                 "systems": [{"name": "pipeline", "pipeline": pipe}]},
        "run": {"backends": ["fake"], "embedders": ["hashing"], "ks": [1], "cache": "off"}})
    forecast = plan(spec)
    calls = {}
    for cell in forecast.per_cell:
        calls.setdefault(cell.pipeline.startswith("pipeline:"), []).append(cell.calls.low)
    assert calls[True] == calls[False] and all(n > 0 for n in calls[True]), calls
