"""``lyra-lab bench`` end to end on its own simulated server, and its one-line errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from lyra_lab.cli import main


def test_bench_simulated_prints_the_table_and_writes_the_folder(tmp_path, capsys):
    out = tmp_path / "sim"
    code = main(["bench", "--backend", "simulated", "--concurrency", "1,2", "--requests", "3",
                 "--max-tokens", "8", "--prompt-tokens", "80", "--out", str(out), "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "simulated/simulated-cloud (simulated)" in printed and f"result folder: {out}" in printed
    summary = pd.read_csv(out / "summary.csv")
    assert summary["level"].tolist() == [1, 2] and summary["requests"].tolist() == [3, 3]
    assert summary["label"].str.endswith("(simulated)").all()
    spec = json.loads((out / "spec.json").read_text())
    assert spec["simulated_server"]["max_concurrency"] == 8 and spec["simulated_server"]["requests_seen"] >= 6
    assert spec["prompt_source"]["kind"] == "synthetic"
    assert (out / "sweep.png").exists()


def test_bench_with_a_corpus_builds_prompts_from_its_sessions(tmp_path, capsys):
    from pathlib import Path

    corpus = Path(__file__).parents[2] / "datasets" / "synthetic_small.jsonl"
    out = tmp_path / "c"
    assert main(["bench", "--backend", "simulated", "--rate", "8", "--requests", "3", "--max-tokens", "4",
                 "--corpus", str(corpus), "--out", str(out), "--quiet", "--no-plots"]) == 0
    records = pd.read_parquet(out / "records.parquet")
    assert set(records["mode"]) == {"open"} and records["prompt_id"].str.startswith("syn-").all()
    assert not (out / "sweep.png").exists()


@pytest.mark.parametrize("argv, message", [
    (["--backend", "simulated/x"], "takes no model"),
    (["--requests", "0"], "--requests must be >= 1"),
    (["--backend", "nosuch/x"], "unknown backend preset"),
    (["--corpus", "/nonexistent/corpus.jsonl"], "corpus.jsonl"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, tmp_path, capsys):
    assert main(["bench", *argv, "--out", str(tmp_path / "x"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_bad_concurrency_list_is_an_argparse_error(capsys):
    assert main(["bench", "--concurrency", "1,two"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "comma-separated" in err


def test_bench_with_slo_prints_goodput_tpot_and_itl_percentiles(tmp_path, capsys):
    out = tmp_path / "gpu"
    code = main(["bench", "--backend", "simulated-gpu", "--stream", "--concurrency", "1,2", "--requests", "4",
                 "--max-tokens", "8", "--prompt-tokens", "80", "--slo", "ttft=5,tpot=5", "--out", str(out),
                 "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "simulated/simulated-gpu (simulated)" in printed and "goodput req/s" in printed
    for column in ("TTFT ms", "TPOT ms", "ITL ms", "E2EL ms", "client queue ms", "E2EL incl. client queue ms"):
        assert column in printed
    assert max(len(line) for line in printed.splitlines()) <= 100
    assert "meeting ttft <= 5 s and tpot <= 5 s" in printed
    summary = pd.read_csv(out / "summary.csv")
    # generous targets: every ok request meets them, so goodput is the throughput
    assert (summary["goodput_rps"] == summary["throughput_rps"]).all()
    assert summary["itl_p50_s"].notna().all() and summary["tpot_p50_s"].notna().all()
    assert json.loads((out / "spec.json").read_text())["slo"] == {"ttft": 5.0, "tpot": 5.0}


def test_a_bad_slo_is_one_line_and_a_nonzero_exit(tmp_path, capsys):
    code = main(["bench", "--backend", "simulated-gpu", "--slo", "latency=fast", "--out", str(tmp_path / "x"),
                 "--quiet"])
    err = capsys.readouterr().err
    assert code != 0 and "--slo" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_bench_prints_a_line_per_level_as_it_finishes(tmp_path, capsys):
    out = tmp_path / "progress"
    code = main(["bench", "--backend", "simulated-gpu", "--concurrency", "1,2", "--requests", "3",
                 "--max-tokens", "8", "--prompt-tokens", "80", "--out", str(out), "--no-plots"])
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    progress = [line for line in lines if line.startswith("level ")]
    assert [line.split(":")[0] for line in progress] == ["level 1/2 c=1", "level 2/2 c=2"]
    assert all(" 3 requests, 3 ok, " in line and line.endswith(" ok req/s") for line in progress)
    assert lines.index(progress[-1]) < min(i for i, line in enumerate(lines) if "result folder" in line)
    assert max(len(line) for line in lines) <= 100


def test_metrics_not_measured_are_shown_as_such_not_as_vllms_zero():
    from lyra_lab.commands.bench import SERVING_TABLES, triple_table

    summary = pd.DataFrame({"mode": ["closed"], "level": [1.0], "streamed": [0],
                            **{f"{m}_p{q}_s": [0.0] for m in ("ttft", "tpot", "itl") for q in (50, 90, 99)}})
    table = triple_table(summary, SERVING_TABLES[0])
    assert table.iloc[0].tolist() == ["closed", "1", "-", "-", "-"]
    assert triple_table(summary.assign(streamed=1), SERVING_TABLES[0]).iloc[0, 2] == "0.0 / 0.0 / 0.0"
