"""Resume × degradation × failed: one decision of the work (``_work.decide``), shared by plan and run.

A run folder holding finished, degraded, failed-for-good, alias and missing cells: the plan of its resume
lists exactly the cells the resume then runs, with their calls; a deterministic failure (a refused store)
is run once and not again by a plain resume, again with --retry-failed; every executor decides the same.
"""

from __future__ import annotations

import pytest

from lyra_lab.backends import BackendError, FakeLLM
from lyra_lab.cli import main
from lyra_lab.experiments import ExperimentSpec, Injected, Resume, RunOptions, plan, run_experiment
from lyra_lab.runs import RunFolder, load_results, read_log, run_status
from lyra_lab.systems import MemorySystemError
from tests.experiments.memory_service import CountingService

GRID = {
    "name": "resume",
    "corpus": {"path": "tiny.jsonl"},
    "grid": {"chunkers": [{"name": "turn_window", "max_turns": 2}, {"name": "token_budget", "max_tokens": 40}],
             "summarizers": ["single_pass"], "recallers": ["bm25"]},
    "run": {"backends": ["fake"], "embedders": ["hashing"], "ks": [1, 3], "cache": "off"},
}
SOURCE, ALIAS = "turn_window+single_pass+none", "token_budget+single_pass+none"


def spec_with(corpus_path, url: str, **run: object) -> ExperimentSpec:
    grid = {**GRID["grid"], "systems": [{"name": "http", "url": url}]}
    return ExperimentSpec.from_dict({**GRID, "corpus": {"path": str(corpus_path)}, "grid": grid,
                                     "run": {**GRID["run"], **run}})


def cells_by_label(run_dir) -> dict[str, list[str]]:
    df = load_results(run_dir)
    return {label.split("|")[0]: sorted(group["cell_id"].unique()) for label, group in df.groupby("pipeline")}


def started(run_dir, attempt: int) -> set[str]:
    """The cells the run's ``attempt``-th attempt ran (``cell_started`` after its ``run_started``)."""
    seen, out = 0, set()
    for e in read_log(run_dir / "log.jsonl"):
        if e["event"] == "run_started":
            seen += 1
        elif seen == attempt and e["event"] == "cell_started":
            out.add(e["cell_id"])
    return out


def test_the_plan_of_a_resume_is_the_resume(tmp_path, corpus_path):
    run_dir = tmp_path / "run"
    with CountingService(fail={"ingest": 400}) as service:  # the system refuses every store: failed for good
        spec = spec_with(corpus_path, service.url)
        run_experiment(spec, run_dir, RunOptions(progress=False), Injected(backends={"fake": FakeLLM()}))
        labels = cells_by_label(run_dir)
        system = next(label for label in labels if label.startswith("http:"))
        folder = RunFolder(run_dir)
        assert set(folder.failed()) == set(labels[system])
        assert set(folder.failed().values()) == {"failed.ingest.refused"}
        degraded, new = labels[SOURCE]
        rows = folder.read_rows(degraded)
        rows.set_column("degraded", 2)  # as a cell whose summary fell back would have written it
        folder.write_rows(degraded, rows)
        (run_dir / "rows" / f"{new}.jsonl").unlink()  # as a run killed before this cell finished
        (run_dir / "rows" / f"{labels[ALIAS][1]}.jsonl").unlink()  # its alias: waits for its source's rows
        # the alias of the degraded cell (u0) keeps its rows: it was copied from the source's first run

        forecast = plan(spec, Resume(run_dir), Injected(backends={"fake": FakeLLM()}))
        assert {c.cell_id for c in forecast.per_cell} == {degraded, new}
        assert dict(forecast.reasons) == {"new": 1, "degraded": 1, "failed": 0}
        assert forecast.failed_kept == 2 and forecast.aliases == 1 and forecast.todo == 2

        llm, requests = FakeLLM(), service.total
        df = run_experiment(spec, run_dir, RunOptions(progress=False), Injected(backends={"fake": llm}))
        assert service.total == requests  # the failed-for-good cells were not run again
    assert started(run_dir, 2) == {degraded, new}
    calls = df[(df["probe_id"] == "") & df["metric"].str.endswith(".calls")].groupby("cell_id")["value"].sum()
    for cell in forecast.per_cell:  # in-process fake backend: the plan's calls are exact
        assert cell.calls.low == cell.calls.high == calls[cell.cell_id] > 0, cell
    assert len(llm.calls) == sum(c.calls.low for c in forecast.per_cell)
    assert set(df["cell_id"]) == {c for cells in labels.values() for c in cells}  # every cell has its rows
    status = run_status(run_dir)
    assert status.failed_for_good == 2 and "2 failed for good" in status.describe()
    resumed = {e["cell_id"]: e for e in read_log(run_dir / "log.jsonl") if e["event"] == "cell_resumed"}
    assert resumed[degraded]["rerun"] == "degraded"
    assert all(resumed[c]["rerun"] is None and resumed[c]["failed"] == "failed.ingest.refused" for c in labels[system])


def test_a_deterministic_failure_is_run_once_and_again_only_with_retry_failed(tmp_path, corpus_path, capsys):
    run_dir = tmp_path / "run"
    with CountingService(fail={"ingest": 400}) as service:
        spec = spec_with(corpus_path, service.url)
        run_experiment(spec, run_dir, RunOptions(progress=False))
        first = dict(service.requests)
        assert first["ingest"] == 2  # one refused store per conversation: each cell stops at its first
        run_experiment(spec, run_dir, RunOptions(progress=False))
        assert service.requests == first  # a plain resume keeps the failed cells

        forecast = plan(spec, Resume(run_dir, retry_failed=True))
        assert dict(forecast.reasons) == {"new": 0, "degraded": 0, "failed": 2} and forecast.failed_kept == 0
        df = run_experiment(spec, run_dir, RunOptions(progress=False, retry_failed=True))
        assert service.requests["ingest"] == 2 * first["ingest"]
        assert started(run_dir, 3) == {c.cell_id for c in forecast.per_cell}
        assert df["metric"].eq("failed.ingest.refused").sum() == 2  # still counted in the rows, once per cell

        toml = tmp_path / "exp.toml"
        toml.write_text(f'name = "resume"\n[corpus]\npath = "{corpus_path}"\n[grid]\n'
                        'chunkers = [{ name = "turn_window", max_turns = 2 }]\nsummarizers = ["single_pass"]\n'
                        f'recallers = ["bm25"]\nsystems = [{{ name = "http", url = "{service.url}" }}]\n'
                        '[run]\nbackends = ["fake"]\nembedders = ["hashing"]\nks = [1, 3]\ncache = "off"\n',
                        encoding="utf-8")
        cli_dir = tmp_path / "cli"
        assert main(["run", str(toml), "--run-dir", str(cli_dir), "--quiet", "--no-report"]) == 0
        assert service.requests["ingest"] == 3 * first["ingest"]
        assert main(["run", str(toml), "--run-dir", str(cli_dir), "--quiet", "--no-report"]) == 0
        assert service.requests["ingest"] == 3 * first["ingest"]
        assert main(["plan", str(toml), "--run-dir", str(cli_dir), "--retry-failed"]) == 0
        assert "runs again 2 failed for good" in capsys.readouterr().out
        assert main(["run", str(toml), "--run-dir", str(cli_dir), "--quiet", "--no-report", "--retry-failed"]) == 0
        assert service.requests["ingest"] == 4 * first["ingest"]


@pytest.mark.parametrize("executor", ["threads", "processes"])
def test_every_executor_makes_the_same_decisions(tmp_path, corpus_path, executor):
    with CountingService(fail={"ingest": 400}) as service:
        serial = spec_with(corpus_path, service.url, executor="serial")
        other = spec_with(corpus_path, service.url, executor=executor, max_cells=2)
        a = run_experiment(serial, tmp_path / "serial", RunOptions(progress=False))
        b = run_experiment(other, tmp_path / executor, RunOptions(progress=False))
        for run_dir, spec in ((tmp_path / "serial", serial), (tmp_path / executor, other)):
            requests = service.total
            assert plan(spec, Resume(run_dir)).todo == 0
            run_experiment(spec, run_dir, RunOptions(progress=False))
            assert service.total == requests
    keys = ["pipeline", "conversation_id", "probe_id", "metric"]

    def decided(df):
        part = df[df["metric"].str.startswith("failed.") | (df["metric"] == "evidence_recall@3")]
        return part.sort_values(keys)[keys + ["value", "degraded"]].reset_index(drop=True)

    assert decided(a).equals(decided(b)) and a.attrs["failed_cells"] == b.attrs["failed_cells"] == []
    assert RunFolder(tmp_path / "serial").failed().values() and \
        sorted(RunFolder(tmp_path / "serial").failed().values()) == sorted(RunFolder(tmp_path / executor).failed().values())


@pytest.mark.parametrize("error, metric", [
    (BackendError("openai", "bad request: unknown parameter", status=400), "failed.backend.bad_request"),
    (BackendError("local", "the request exceeds the available context size", status=400),
     "failed.backend.context_overflow"),
    (MemorySystemError("http:x", "open", "ConnectError: [Errno 111] Connection refused"), "failed.open.unreachable"),
    (MemorySystemError("mcp:x", "open", "ProcessLookupError: exited"), "failed.open.cannot_start"),
    (MemorySystemError("mcp:x", "ingest", "HTTP 400: the store is full"), "failed.ingest.refused"),
    # a backend call of the system's refused outright: its recurrence passed on, not parsed from the text
    (MemorySystemError("mem0:x", "ingest", "BackendError: refused", recurs="bad_request"), "failed.ingest.refused"),
    (MemorySystemError("mem0:x", "query", "BackendError: too big", recurs="context_overflow"),
     "failed.query.context_overflow"),
    (BackendError("single_pass", "the call failed; first error: HTTP 400", recurs=None), None),
    (BackendError("openai", "rate limited", status=429), None),
    (BackendError("openai", "server error", status=503), None),
    (MemorySystemError("http:x", "query", "HTTP 500: boom"), None),
    (MemorySystemError("http:x", "open", "no answer within 60 s"), None),
    (MemorySystemError("mcp:x", "query", "search: BrokenResourceError: "), None),
])
def test_failures_by_kind(error, metric):
    from lyra_lab.experiments.cells._failures import deterministic

    failure = deterministic(error)
    assert (failure.metric if failure is not None else None) == metric


def test_a_system_refusing_its_stores_is_counted_and_kept_by_a_plain_resume(tmp_path, corpus_path):
    from tests.experiments.test_system_grid import fake_mcp, running_servers

    system = fake_mcp("refuse", tmp_path)
    spec = ExperimentSpec.from_dict({**GRID, "corpus": {"path": str(corpus_path)},
                                     "grid": {**GRID["grid"], "systems": [system]}})
    run_dir = tmp_path / "run"
    df = run_experiment(spec, run_dir, RunOptions(progress=False))
    mine = df[df["pipeline"] == "mcp:fake-refuse"]
    refused = mine[mine["metric"] == "failed.ingest.refused"]
    assert len(refused) == 2 and (refused["value"] == 12).all()  # every store of the 12 turns of each conversation
    assert not mine["metric"].str.startswith("degraded.").any() and (mine["degraded"] == 12).all()
    assert set(RunFolder(run_dir).failed().values()) == {"failed.ingest.refused"}
    run_experiment(spec, run_dir, RunOptions(progress=False))
    assert started(run_dir, 2) == set()  # nothing run again: the stores would be refused again
    assert plan(spec, Resume(run_dir, retry_failed=True)).reasons["failed"] == 2
    run_experiment(spec, run_dir, RunOptions(progress=False, retry_failed=True))
    assert started(run_dir, 3) == set(refused["cell_id"])
    assert not running_servers("refuse", tmp_path)


def test_a_system_session_passes_on_whether_its_backend_call_recurs():
    from lyra_lab.experiments.cells._failures import deterministic
    from lyra_lab.systems._base import BaseSession

    def refused():
        raise BackendError("local", "the request exceeds the available context size", status=400)

    with pytest.raises(MemorySystemError) as raised:
        BaseSession("mem0:x").guard("ingest", refused)
    assert raised.value.recurs == "context_overflow"
    assert deterministic(raised.value).metric == "failed.ingest.context_overflow"
