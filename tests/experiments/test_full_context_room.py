"""``full_context`` in a grid: its context is cut to the room the answerer's window leaves, not to
``[grid] context_tokens``; its rows carry that room (``answer_room``); the plan counts its answer prompts."""

from __future__ import annotations

import math

from lyra_lab.experiments import ExperimentSpec, RunOptions, plan, run_experiment
from lyra_lab.measures._answer_room import CHAT_TOKENS, SAFETY
from tests.systems.conftest import SYNTHETIC

CONTEXT = 100  # [grid] context_tokens: far below the fake answerer's room


def room_spec(window: int) -> ExperimentSpec:
    return ExperimentSpec.from_dict({
        "name": "room", "corpus": {"path": str(SYNTHETIC), "max_probes": 6},
        "grid": {"chunkers": [{"name": "turn_window", "max_turns": 1}], "recallers": ["bm25", "full_context"],
                 "context_tokens": [CONTEXT]},
        "run": {"backends": [{"preset": "fake", "context_window": window}], "embedders": ["none"], "ks": [5],
                "score_at_tokens": [256], "cache": "off"},
        "qa": {"enabled": True, "max_tokens": 16}})


def probe_values(df, recaller: str, metric: str):
    rows = df[(df["recaller"] == recaller) & (df["metric"] == metric) & (df["probe_id"] != "")]
    return rows.set_index(["cell_id", "probe_id"])["value"]


def test_full_context_fills_the_answerers_room_and_the_others_keep_their_budget(tmp_path):
    window = 2048
    df = run_experiment(room_spec(window), tmp_path / "run", RunOptions(progress=False))
    tokens, room = probe_values(df, "full_context", "context_tokens"), probe_values(df, "full_context", "answer_room")
    assert len(room) == len(tokens) > 8
    assert (tokens <= room.loc[tokens.index]).all()  # never past the room
    assert tokens.max() > CONTEXT  # the whole history, not the pipelines' context budget
    usable = math.floor((window - CHAT_TOKENS - 16) / SAFETY)
    assert ((room < usable) & (room > usable - 120)).all()  # the room less each probe's prompt and question
    assert probe_values(df, "bm25", "context_tokens").max() <= CONTEXT
    assert probe_values(df, "bm25", "answer_room").empty  # only a whole-memory recaller has a room


def test_with_the_history_in_the_window_the_evidence_is_always_in_its_context(tmp_path):
    df = run_experiment(room_spec(8192), tmp_path / "run", RunOptions(progress=False))
    full, bm25 = (probe_values(df, r, "evidence_in_context") for r in ("full_context", "bm25"))
    assert len(full) > 8 and (full == 1.0).all()  # a real ceiling: every evidence turn shown
    assert bm25.mean() < 1.0


def test_the_plan_counts_full_contexts_larger_answer_prompts_as_the_run_sends_them(tmp_path):
    small, large = plan(room_spec(512)), plan(room_spec(8192))
    prompts = {w: sum(c.prompt_tokens.low for c in f.per_cell) for w, f in ((512, small), (8192, large))}
    assert prompts[8192] > prompts[512] * 1.5  # the bigger window, the bigger full_context prompts
    df = run_experiment(room_spec(8192), tmp_path / "run", RunOptions(progress=False))
    sent = df.loc[(df["metric"] == "answer.prompt_tokens"), "value"].sum()
    assert all(c.prompt_tokens.exact for c in large.per_cell) and prompts[8192] == sent
    assert {c.cell_id for c in small.per_cell}.isdisjoint(c.cell_id for c in large.per_cell)  # the window is in the id
