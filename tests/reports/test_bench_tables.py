"""The benchmarks' own tables (``report --table``) against the benchmarks' own rules.

LoCoMo: a QA run over the real LoCoMo file (every category, the fake model answering), its table's
counts and means checked against this file's rewrite of the LoCoMo release's category rule
(``task_eval/evaluation_stats.py``, ``analyze_aggr_acc``: each question counted under the
``category`` field of its ``qa`` item in ``locomo10.json``, the overall over all five categories),
reading the category from the raw JSON by the question's position, not from the run's rows.

LongMemEval: a frame of judge verdicts and session recall against a rewrite of
``print_qa_metrics.py`` (per question type, task-averaged, overall, abstention = ``'_abs' in id``)
and ``print_retrieval_metrics.py`` (questions whose id holds ``_abs`` left out).
"""

from __future__ import annotations

import json
import random
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest

from lyra_lab.cli import main
from lyra_lab.reports import LOCOMO_LABELS, TableError, locomo_table, longmemeval_table
from tests.helpers.locomo import locomo_path, needs_locomo

CONVERSATIONS = 3


@pytest.fixture(scope="module")
def locomo_run(tmp_path_factory):
    from lyra_lab.experiments import ExperimentSpec, RunOptions, run_experiment

    spec = ExperimentSpec.from_dict({
        "name": "locomo-table", "corpus": {"path": str(locomo_path()), "conversations": CONVERSATIONS},
        "grid": {"chunkers": [{"name": "turn_window", "max_turns": 1}], "recallers": ["bm25"]},
        "run": {"backends": ["fake"], "embedders": ["none"], "ks": [10], "score_at_tokens": [], "cache": "off"},
        "qa": {"enabled": True, "scorer": "locomo"}})
    run_dir = tmp_path_factory.mktemp("locomo-table")
    return run_dir, run_experiment(spec, run_dir, RunOptions(progress=False))


def _release_counts(f1: pd.Series) -> tuple[dict[int, int], dict[int, float]]:
    """analyze_aggr_acc's total_counts and acc_counts, the category read from the raw file by position."""
    raw = {sample["sample_id"]: sample["qa"] for sample in json.loads(locomo_path().read_text())}
    total: dict[int, int] = defaultdict(int)
    acc: dict[int, float] = defaultdict(float)
    for probe_id, value in f1.items():
        conversation, _, j = str(probe_id).rpartition(":qa")
        category = raw[conversation][int(j)]["category"]
        total[category] += 1
        acc[category] += value
    return dict(total), dict(acc)


@needs_locomo
def test_locomo_table_counts_follow_the_release_category_rule(locomo_run):
    _, df = locomo_run
    f1 = df[(df["metric"] == "qa_f1") & (df["probe_id"] != "")].set_index("probe_id")["value"]
    total, acc = _release_counts(f1)
    raw = json.loads(locomo_path().read_text())[:CONVERSATIONS]
    asked = defaultdict(int)
    for sample in raw:
        for qa in sample["qa"]:
            asked[qa["category"]] += 1
    assert total == dict(asked)  # every question of the three conversations was asked, category 5 too
    assert set(total) == {1, 2, 3, 4, 5}

    table = locomo_table(df)
    cells = table.cells[table.cells["measure"] == "F1 (locomo scorer)"].set_index("column")
    names = LOCOMO_LABELS["locomo_paper"]
    assert table.columns == tuple(f"{c} {names[c]}" for c in (4, 1, 2, 3, 5)) + ("overall", "overall 1-4")
    for category, n in total.items():
        cell = cells.loc[f"{category} {names[category]}"]
        assert cell["n"] == n
        assert cell["value"] == pytest.approx(acc[category] / n)
    # overall: every category's sum over every category's count (the release's total_v / total_k)
    assert cells.loc["overall", "n"] == sum(total.values())
    assert cells.loc["overall", "value"] == pytest.approx(sum(acc.values()) / sum(total.values()))
    assert cells.loc["overall 1-4", "n"] == sum(n for c, n in total.items() if c != 5)


@needs_locomo
def test_report_table_locomo_prints_the_release_names_with_n_and_mem0_names_on_request(locomo_run, capsys):
    run_dir, df = locomo_run
    assert main(["report", str(run_dir), "--table", "locomo"]) == 0
    out = capsys.readouterr().out  # a block per pipeline, the release's columns as its rows, in its order
    n5 = int(((df["metric"] == "qa_f1") & (df["category"].astype(str) == "5")).sum())
    rows = [line.split("  ")[1] for line in out.splitlines() if line.startswith("  ") and "(n=" in line]
    assert rows[:7] == ["4 single-hop", "1 multi-hop", "2 temporal", "3 open-domain", "5 adversarial", "overall",
                        "overall 1-4"]
    assert f"(n={n5})" in out and "\nturn_window+none+none|bm25\n" in out
    assert all(len(line) <= 100 for line in out.splitlines())
    markdown = (run_dir / "report" / "table_locomo.md").read_text(encoding="utf-8")  # the table as the paper's
    assert "| 4 single-hop | 1 multi-hop | 2 temporal | 3 open-domain | 5 adversarial | overall | overall 1-4 |" in markdown
    assert (run_dir / "report" / "table_locomo.csv").exists()
    assert main(["report", str(run_dir), "--table", "locomo", "--category-labels", "mem0"]) == 0
    capsys.readouterr()
    assert "| 4 open-domain | 1 single-hop | 2 temporal | 3 multi-hop | 5 adversarial |" in (
        run_dir / "report" / "table_locomo.md").read_text(encoding="utf-8")


@needs_locomo
def test_report_table_longmemeval_on_a_locomo_run_is_one_line(locomo_run, capsys):
    run_dir, _ = locomo_run
    assert main(["report", str(run_dir), "--table", "longmemeval"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "not a LongMemEval run" in err and "\n" not in err


def test_locomo_table_names_a_scorer_that_is_not_locomos():
    rows = pd.DataFrame({"pipeline": "p", "probe_id": ["a", "b"], "category": [1, 5], "metric": "qa_f1",
                         "value": [0.5, 1.0], "qa.scorer": "squad"})
    table = locomo_table(rows)
    assert set(table.cells["measure"]) == {"F1 (squad scorer)"}
    assert any("`locomo` scorer" in note for note in table.notes)
    with pytest.raises(TableError, match="not a LoCoMo run"):
        locomo_table(rows.assign(category=["temporal-reasoning", "multi-session"]))


# --- LongMemEval ---------------------------------------------------------------------------

TYPES = ["single-session-user", "single-session-preference", "single-session-assistant", "multi-session",
         "temporal-reasoning", "knowledge-update"]


def _lme_rows(seed: int) -> pd.DataFrame:
    rng = random.Random(seed)
    rows = []
    for i in range(120):
        qtype = rng.choice(TYPES)
        qid = f"q{i:03d}" + ("_abs" if rng.random() < 0.2 else "")
        base = {"pipeline": "p", "probe_id": qid, "category": qtype}
        rows.append({**base, "metric": "judge", "judge": "gpt", "value": float(rng.random() < 0.6)})
        for k in (5, 10):
            rows.append({**base, "metric": f"session_recall_any@{k}", "judge": None, "value": float(rng.random() < 0.7)})
    return pd.DataFrame(rows)


def _print_qa_metrics(rows: pd.DataFrame) -> dict[str, tuple[float, int]]:
    """LongMemEval's print_qa_metrics, rewritten: accuracy per type, task-averaged, overall, abstention."""
    type2acc = {t: [] for t in TYPES}
    abstention = []
    for r in rows[rows["metric"] == "judge"].itertuples():
        type2acc[r.category].append(1 if r.value else 0)
        if "_abs" in r.probe_id:
            abstention.append(1 if r.value else 0)
    out = {t: (float(np.mean(v)), len(v)) for t, v in type2acc.items()}
    out["task-averaged"] = (float(np.mean([np.mean(v) for v in type2acc.values()])), 0)
    everything = [x for v in type2acc.values() for x in v]
    out["overall"] = (float(np.mean(everything)), len(everything))
    out["abstention"] = (float(np.mean(abstention)), len(abstention))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_longmemeval_table_follows_print_qa_metrics_and_print_retrieval_metrics(seed):
    rows = _lme_rows(seed)
    table = longmemeval_table(rows)
    cells = table.cells.set_index(["measure", "column"])
    for column, (value, n) in _print_qa_metrics(rows).items():
        assert cells.loc[("judge accuracy (gpt)", column), "value"] == pytest.approx(value), column
        if column != "task-averaged":
            assert cells.loc[("judge accuracy (gpt)", column), "n"] == n, column
    kept = [r for r in rows.itertuples() if "_abs" not in r.probe_id]  # print_retrieval_metrics drops them
    for k in (5, 10):
        values = [r.value for r in kept if r.metric == f"session_recall_any@{k}"]
        cell = cells.loc[(f"session_recall_any@{k}", "overall")]
        assert (cell["value"], cell["n"]) == (pytest.approx(np.mean(values)), len(values))
    assert table.columns[-3:] == ("task-averaged", "overall", "abstention")
