"""A rescore is a run whose cache is the export, on the one road: rescore × consent, rescore × memory systems,
the plan's counts against the calls paid, an export whose cells all failed, and a run built from a dict.

Each pair is checked from outside: a counting HTTP service (tests/experiments/memory_service.py, on a
non-loopback address of this machine where consent is the point) counts every request it receives.
"""

from __future__ import annotations

import json
import sys

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import FakeLLM
from lyra_lab.cli import main
from lyra_lab.experiments import (Changes, ExperimentSpec, Injected, RunOptions, rescore, rescore_plan,
                                  run_experiment)
from lyra_lab.runs import export_run, load_results
from tests.experiments.memory_service import CountingService, free_port, non_loopback_address
from tests.experiments.test_plan_consent_systems import experiment as with_systems
from tests.experiments.test_plan_consent_systems import toml_file
from tests.systems.conftest import SYNTHETIC


def experiment(systems: list[object], **run: object) -> dict[str, object]:
    """The experiment of test_plan_consent_systems (a pipeline, the systems named, QA and a judge)."""
    data = with_systems(systems or [{"name": "http", "url": "unused"}], **run)
    if not systems:
        data["grid"] = {k: v for k, v in data["grid"].items() if k != "systems"}  # type: ignore[attr-defined]
    return data


def exported_run(tmp_path, systems, name="run", **run):
    """Run ``experiment(systems)`` from its TOML file (cache in the run folder) and export it; the file."""
    path = toml_file(tmp_path, experiment(systems, cache="run", **run))
    assert main(["run", str(path), "--run-dir", str(tmp_path / name), "--quiet", "--no-report", "--yes"]) in (0, 1)
    out = tmp_path / f"{name}.zip"
    assert main(["export", str(tmp_path / name), "--out", str(out)]) == 0
    return out


def remote_judge(url: str) -> str:
    return json.dumps({"preset": f"llamacpp/{url}"})


def test_rescore_off_a_terminal_without_yes_sends_a_non_loopback_judge_nothing(tmp_path, capsys, monkeypatch):
    address = non_loopback_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address to serve on")
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "cache"))
    out = exported_run(tmp_path, [])
    capsys.readouterr()
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False, raising=False)
    with CountingService(host=address) as judge:
        code = main(["rescore", str(out), "--run-dir", str(tmp_path / "judged"), "--judge", remote_judge(judge.url)])
        err = capsys.readouterr().err.strip().splitlines()
        assert judge.total == 0, judge.requests
        assert code == 2, err
        assert err[-1] == f"error: not sending conversation text to {judge.url}/v1: pass --yes to agree", err
        # from the API, with no terminal to ask on: one line naming the endpoint, nothing sent
        changes = Changes(judges=({"prompt": "correct_wrong_v1", "backend": {"preset": f"llamacpp/{judge.url}"}},))
        with pytest.raises(ConfigError, match=f"not sending conversation text of .* to {judge.url}/v1: agree with "
                                              r"RunOptions\(yes=True\)"):
            rescore(out, tmp_path / "judged-api", changes)
        assert judge.total == 0, judge.requests
    assert not list((tmp_path / "judged" / "rows").glob("*.jsonl")) if (tmp_path / "judged" / "rows").exists() \
        else True


def test_run_experiment_from_the_api_refuses_a_non_loopback_service_without_consent(tmp_path):
    url = "http://10.255.255.1:5000"  # nothing may be sent: the road stops before the folder is touched
    spec = ExperimentSpec.from_dict(experiment([{"name": "http", "url": url}]))
    with pytest.raises(ConfigError, match=f"not sending conversation text of .* to {url}: agree with"):
        run_experiment(spec, tmp_path / "run", RunOptions(progress=False))
    assert not (tmp_path / "run").exists()
    asked = []
    with pytest.raises(ConfigError, match="no"):  # the caller's question is asked, and its refusal stands
        run_experiment(spec, tmp_path / "run", RunOptions(progress=False, ask=lambda endpoint, corpus: (
            asked.append(endpoint), (_ for _ in ()).throw(ConfigError("no")))))
    assert asked == [url]


@pytest.mark.parametrize("stopped", [False, True])
def test_rescore_sends_a_memory_service_nothing_and_rebuilds_identical_rows(tmp_path, capsys, monkeypatch, stopped):
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "cache"))
    with CountingService() as service:
        out = exported_run(tmp_path, [{"name": "http", "url": service.url}])
        assert service.requests.get("query", 0) > 0
        capsys.readouterr()
        before = dict(service.requests)
        if not stopped:
            assert main(["rescore", str(out), "--run-dir", str(tmp_path / "again")]) == 0
            assert service.requests == before  # open, ingest, query, contents, close: none sent again
    if stopped:  # the service is gone: the file holds its rows
        assert main(["rescore", str(out), "--run-dir", str(tmp_path / "again")]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= 100 for line in out.splitlines() if str(tmp_path) not in line), out
    printed = " ".join(out.split())  # a line the CLI wraps at 100 columns reads as one
    assert "nothing sent to them" in printed and "new: 0 LLM calls" in printed, printed
    assert "LLM calls paid: 0" in printed and "rows identical" in printed, printed
    rebuilt = load_results(tmp_path / "again")
    assert not rebuilt["metric"].str.startswith("failed.").any()
    assert rebuilt["pipeline"].str.startswith("http:").any()


def test_a_change_leaves_memory_systems_out_and_sends_them_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "cache"))
    with CountingService() as service:
        out = exported_run(tmp_path, [{"name": "http", "url": service.url}])
        before = dict(service.requests)
        changes = Changes(scorer="locomo")
        plan = rescore_plan(out, tmp_path / "plan", changes)
        assert plan.systems_left_out == 2 and any("left out: 2 cells of memory systems" in line
                                                  for line in plan.lines())
        result = rescore(out, tmp_path / "again", changes)
        assert service.requests == before and result.total_paid == 0
    assert not result.rows["pipeline"].str.startswith("http:").any()
    assert set(result.rows.loc[result.rows["metric"] == "qa_f1", "qa.scorer"]) == {"locomo"}


def test_an_unchanged_judge_on_a_backend_table_is_not_new(tmp_path, monkeypatch):
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "cache"))
    data = experiment([], cache="run")
    data["qa"]["judges"] = [{"prompt": "correct_wrong_v1", "backend": {"preset": "fake"}}]  # type: ignore[index]
    path = toml_file(tmp_path, data)
    assert main(["run", str(path), "--run-dir", str(tmp_path / "run"), "--quiet", "--no-report"]) == 0
    export_run(tmp_path / "run", tmp_path / "run.zip")
    plan = rescore_plan(tmp_path / "run.zip", tmp_path / "again")
    assert plan.new_judges == () and plan.total_calls == 0 and "new: 0 LLM calls" in plan.lines()
    result = rescore(tmp_path / "run.zip", tmp_path / "again")
    assert result.total_paid == 0 and result.compared and result.differences == ()


def test_degraded_cells_come_from_the_file_so_the_plan_counts_what_is_paid(tmp_path, monkeypatch):
    """Answers lost for good (a degraded cell): its rows are kept as the run left them, nothing paid, as counted."""
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "cache"))
    from lyra_lab.backends import BackendError

    sent = []

    def flaky(messages):
        sent.append(messages)
        if len(sent) <= 2:
            raise BackendError("answerer", "server error", status=503)  # lost for this run: a fallback
        return "Paris"

    data = experiment([], cache="run")
    data["run"]["backends"] = ["answerer"]  # type: ignore[index]
    data["qa"]["judges"] = []  # type: ignore[index]
    path = toml_file(tmp_path, data)
    rows = run_experiment(ExperimentSpec.from_toml(path), tmp_path / "run", RunOptions(progress=False),
                          Injected(backends={"answerer": FakeLLM(respond=flaky)}))
    assert (rows["degraded"] > 0).any() and not rows["metric"].str.startswith("failed.").any()
    export_run(tmp_path / "run", tmp_path / "run.zip")
    plan = rescore_plan(tmp_path / "run.zip", tmp_path / "plan")
    answerer = FakeLLM(respond=lambda m: "a new answer the file would not hold")
    result = rescore(tmp_path / "run.zip", tmp_path / "again", injected=Injected(backends={"answerer": answerer}))
    assert len(answerer.calls) == result.total_paid == 0 and "new: 0 LLM calls" in plan.lines()
    assert plan.total_calls == 0 and plan.from_file and result.compared and result.differences == ()


def test_cells_the_file_lacks_are_counted_and_paid_as_counted(tmp_path, monkeypatch):
    """A service answering 500 at query fails its cells for this run (no rows): a rescore runs them, counted first."""
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "cache"))
    with CountingService(fail={"query": 500}) as service:
        out = exported_run(tmp_path, [{"name": "http", "url": service.url}])
        service.fail.clear()
        plan = rescore_plan(out, tmp_path / "plan")
        assert "new: 0 LLM calls" not in plan.lines()  # the cells the file lacks make calls
        assert plan.lacking_cells == 2 and plan.lacking_calls > 0
        assert any(f"new: up to {plan.lacking_calls} LLM calls for 2 cells" in line for line in plan.lines())
        result = rescore(out, tmp_path / "again")
    # as counted: the plan's dry run asks the file's cache too (a judge's controls, alike for every cell,
    # were paid by the pipelines' cells and are answered from it)
    assert 0 < result.total_paid == plan.lacking_calls
    assert result.compared and result.differences == ()  # the cells the file held are as exported


def test_an_export_whose_cells_all_failed_rescores_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "cache"))
    data = experiment([{"name": "http", "url": "http://127.0.0.1:1"}], cache="run")
    with CountingService(fail={"query": 500}) as service:
        data = experiment([{"name": "http", "url": service.url}], cache="run")
        data["grid"] = {"systems": data["grid"]["systems"], "recallers": ["bm25"]}  # type: ignore[index]
        path = toml_file(tmp_path, data)
        assert main(["run", str(path), "--run-dir", str(tmp_path / "run"), "--quiet", "--no-report"]) == 1
        assert main(["export", str(tmp_path / "run"), "--out", str(tmp_path / "run.zip")]) == 0
        capsys.readouterr()
        before = service.total
        assert main(["rescore", str(tmp_path / "run.zip"), "--run-dir", str(tmp_path / "again")]) == 2
        assert service.total == before
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "none of the run's 2 cells finished" in err[0] and "Traceback" not in err[0], err


def test_an_export_whose_cells_all_failed_for_good_rescores_cleanly(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "cache"))
    data = experiment([{"name": "http", "url": f"http://127.0.0.1:{free_port()}"}], cache="run")
    data["grid"] = {"systems": data["grid"]["systems"], "recallers": ["bm25"]}  # type: ignore[index]
    path = toml_file(tmp_path, data)
    assert main(["run", str(path), "--run-dir", str(tmp_path / "run"), "--quiet", "--no-report"]) == 0
    assert main(["export", str(tmp_path / "run"), "--out", str(tmp_path / "run.zip")]) == 0
    capsys.readouterr()
    assert main(["rescore", str(tmp_path / "run.zip"), "--run-dir", str(tmp_path / "again")]) == 0
    printed = " ".join(capsys.readouterr().out.split())  # a line the CLI wraps at 100 columns reads as one
    assert "LLM calls paid: 0" in printed and "rows identical" in printed, printed


def test_a_run_built_from_a_dict_exports_and_rescores_with_identical_rows(tmp_path, monkeypatch):
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "cache"))
    data = experiment([], cache="run")
    data["corpus"] = {"path": str(SYNTHETIC), "max_probes": 4}
    rows = run_experiment(ExperimentSpec.from_dict(data), tmp_path / "run", RunOptions(progress=False))
    manifest = export_run(tmp_path / "run", tmp_path / "run.zip")
    assert manifest["responses"] > 0
    result = rescore(tmp_path / "run.zip", tmp_path / "again")
    assert result.total_paid == 0 and result.compared and result.differences == (), result.differences
    assert sorted(result.rows["cell_id"].unique()) == sorted(rows["cell_id"].unique())


def test_recall_eval_is_on_the_road_too(tmp_path, capsys, monkeypatch):
    """A non-local embedder off a terminal without --yes: one line, exit 2, nothing embedded (no network here)."""
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False, raising=False)
    code = main(["recall-eval", str(SYNTHETIC), "--recaller", "dense", "--embedder", "openai/text-embedding-3-small",
                 "--no-cache", "--conversations", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1] == "error: not sending conversation text to https://api.openai.com/v1: pass --yes " \
                                    "to agree", err
