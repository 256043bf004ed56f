"""The chunk and budget tuning notebook runs headless in small mode and its tables mean what they say.

Small mode embeds with the real default embedder (e5), on enough probes that every interval its
figures compare is at most ±0.15 wide.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lyra_lab import datasets

CHUNKERS = ({f"turn_window[max_turns={n}]" for n in (2, 8)}  # small mode's six (full mode: ten)
            | {f"token_budget[max_tokens={n}]" for n in (128, 256)}
            | {f"overlap_window[max_tokens={n},overlap_tokens={n // 4}]" for n in (128, 256)})
BUDGETS = {128, 256, 512, 1000, 2048}  # the notebook's grid with TOKEN_BUDGET = 1000
HALF_WIDTH = 0.15  # the widest 95% CI half-width a compared figure may have (issue 45)


def dominated(costs: np.ndarray, qualities: np.ndarray, i: int) -> bool:
    """Some other point costs no more, is no worse, and is strictly better on one axis (the textbook rule)."""
    for j in range(len(costs)):
        if j != i and costs[j] <= costs[i] and qualities[j] >= qualities[i] and (
                costs[j] < costs[i] or qualities[j] > qualities[i]):
            return True
    return False


def check_front(frame: pd.DataFrame, cost: str, quality: str) -> None:
    for corpus, part in frame.groupby("corpus"):
        c, q = part[cost].to_numpy(float), part[quality].to_numpy(float)
        flags = part["pareto"].to_numpy(bool)
        assert flags.any(), f"{corpus}: empty Pareto front on {quality} vs {cost}"
        for i, on in enumerate(flags):
            assert on == (not dominated(c, q, i)), f"{corpus}: row {part.iloc[i]['pipeline']} marked pareto={on}"


@pytest.mark.slow
def test_chunk_tuning_notebook_sweeps_every_setting_and_compares_the_pick(tmp_path, run_notebook, monkeypatch):
    monkeypatch.delenv("LYRA_NB_FULL", raising=False)  # small mode
    run_notebook("05_chunk_budget_tuning.ipynb", "LYRA_CHUNK_TUNING_OUT", needs=(), timeout=900)
    corpora = {"synthetic"} | ({"LoCoMo"} if datasets.find("locomo") is not None else set())

    folders = sorted(tmp_path.glob("*-small"))  # sweep, library default, search: each embeds with e5
    assert len(folders) >= 5
    for folder in folders:
        assert json.loads((folder / "spec.json").read_text())["embedders"] == ["e5"], folder.name

    settings = pd.read_csv(tmp_path / "settings.csv")
    assert set(settings["corpus"]) == corpora
    for corpus, part in settings.groupby("corpus"):  # every chunker × recaller, once, with its memory size
        assert sorted(zip(part["chunker"], part["recaller"])) == sorted(
            (c, r) for c in CHUNKERS for r in ("bm25", "dense"))
        assert (part["memory_tokens"] > 0).all() and (part["llm_tokens"] == 0).all()  # small mode: LLM-free
        assert part["evidence_recall@10"].between(0, 1).all() and (part["n"] >= 40).all()
    assert ((settings["ci_high"] - settings["ci_low"]) / 2 <= HALF_WIDTH).all()
    # overlapping windows store their overlap twice: more memory than the same size without overlap
    for corpus, part in settings.groupby("corpus"):
        mem = part.groupby("chunker")["memory_tokens"].first()
        assert mem["overlap_window[max_tokens=256,overlap_tokens=64]"] > mem["token_budget[max_tokens=256]"]
    check_front(settings, "memory_tokens", "evidence_recall@10")

    points = pd.read_csv(tmp_path / "budget_points.csv")
    for corpus, part in points.groupby("corpus"):  # every setting at every budget
        assert len(part) == 2 * len(CHUNKERS) * len(BUDGETS)
        assert set(part["budget_tokens"]) == BUDGETS
        assert (part["context_tokens"] <= part["budget_tokens"]).all()
        assert (part["ci_low"] <= part["answer_in_context"]).all() and (
            part["answer_in_context"] <= part["ci_high"]).all()
    check_front(points, "budget_tokens", "answer_in_context")
    assert (points["n"] >= 40).all() and ((points["ci_high"] - points["ci_low"]) / 2 <= HALF_WIDTH).all()
    precision = pd.read_csv(tmp_path / "precision.csv")  # what the notebook prints: n and widest half-width
    assert set(precision["corpus"]) == corpora and (precision["widest_half_width"] <= HALF_WIDTH).all()
    for _, row in precision.iterrows():
        frame = settings if row["figure"].startswith("recall") else points
        part = frame[frame["corpus"] == row["corpus"]]
        assert row["widest_half_width"] == pytest.approx(((part["ci_high"] - part["ci_low"]) / 2).max())
        assert row["n_min"] == part["n"].min() and row["n_max"] == part["n"].max()

    comparison = pd.read_csv(tmp_path / "pick_vs_default.csv")
    assert sorted(zip(comparison["corpus"], comparison["against"])) == sorted(
        (c, a) for c in corpora for a in ("default chunker", "library default"))
    for _, row in comparison.iterrows():
        assert row["pick_B"] <= 1000 and row["default_B"] == 1000
        recaller = row["pick"].rpartition("|")[2]
        assert row["default"] == {"default chunker": f"turn_window[max_turns=8]+none+none|{recaller}",
                                  "library default": f"turn_window+none+none|{recaller} (raw turns kept)"}[row["against"]]
        assert row["difference"] == pytest.approx(row["pick_mean"] - row["default_mean"], abs=1e-9)
        assert row["ci_low"] <= row["difference"] <= row["ci_high"]
        # small mode pairs probes as units (2 conversations are too few clusters), and says so
        assert 0 < row["p_value"] <= 1 and row["n_probes"] >= 40 and row["n_clusters"] == row["n_probes"]
        assert row["conversations"] == {"LoCoMo": 2, "synthetic": 3}[row["corpus"]] and row["half_width"] <= HALF_WIDTH
        # the pick is the best under the budget: nothing at B <= 1000 beats it
        under = points[(points["corpus"] == row["corpus"]) & (points["budget_tokens"] <= 1000)]
        assert row["pick_mean"] == pytest.approx(under["answer_in_context"].max())

    answer = (tmp_path / "answer.md").read_text()
    assert all(f"- {corpus}: the best setting is" in answer for corpus in corpora)
    assert "dense embedder e5" in answer and "(probes as units: optimistic)" in answer
    for name in ("recall_vs_memory_tokens", "answer_vs_context_budget", "pareto_answer_vs_context"):
        assert (tmp_path / "figures" / f"{name}.png").stat().st_size > 10_000
    assert not (tmp_path / "figures" / "answer_vs_llm_tokens.png").exists()  # small mode draws no LLM axis

    search = pd.read_csv(tmp_path / "random_search.csv")  # 2 seeded draws (distinct) x 2 recallers, best first
    assert 2 <= len(search) <= 4 and len(search) % 2 == 0
    assert set(search["recaller"]) == {"bm25", "dense"}
    assert search["mean"].is_monotonic_decreasing and search["mean"].between(0, 1).all()
    if (search["chunker"] == "turn_window").any():  # two draws need not hold every family
        assert search.loc[search["chunker"] == "turn_window", "chunker.max_turns"].between(1, 24).all()
    sized = search[search["chunker"] != "turn_window"]
    assert sized["chunker.max_tokens"].between(32, 1024).all()
    overlap = search[search["chunker"] == "overlap_window"]
    assert (overlap["chunker.overlap_tokens"] < overlap["chunker.max_tokens"]).all()
