"""Soak: many sessions through a summarizing grid on a simulated server that fails 20% of requests.

Injected: 429 with Retry-After, 500/503/529, hangs (5 s, past the backend's 0.5 s timeout_s, which
bounds every attempt whatever the summarizers' own per-call deadlines, so the client gives each
hung attempt up after 0.5 s and retries), malformed JSON and cut streams, over small latencies, with the run's response
cache on. The run must lose no cell, give rows identical (timing metrics
aside) to a fault-free run, and log every retry: each fault the server
injected has exactly one ``retry`` event in the run log (``log.jsonl``), of the
same kind (HTTP status, or timeout, or broken body), naming the cell that made
the call (the Python logger's warnings are counted too).

The short variant (~20 sessions) runs in the normal suite; the long one
(>= 200 sessions) only with ``pytest -m soak``.
"""

from __future__ import annotations

import logging
import textwrap
from collections import Counter

import pandas as pd
import pytest

from lyra_lab.backends import SimulatedServer
from lyra_lab.synthetic import generate_synthetic
from lyra_lab.experiments import ExperimentSpec, run_experiment
from lyra_lab.runs import read_log

# 20% of requests fail, spread over every kind of fault the server can inject.
FAULTS = {"429": 0.04, "500": 0.03, "503": 0.03, "529": 0.03, "hang": 0.025, "malformed": 0.025, "cut": 0.025}
# Patient enough that 20% faults never exhaust the attempts (0.2**12 per call), quick on a test box.
BACKEND = ('max_attempts = 12, retry_base_s = 0.01, retry_max_s = 0.05, retry_after_max_s = 0.05, '
           'timeout_s = 0.5')


def soak_toml(folder, base_url: str, conversations: int, sessions: int, map_reduce_concurrency: int = 3):
    """Write a synthetic corpus and a single_pass × map_reduce grid on ``base_url``; return the TOML path."""
    months = max(1, sessions // 20 + 1)
    corpus = generate_synthetic(0, conversations=conversations, months=months, sessions=sessions,
                                single_facts=4, updated_facts=1, temporal=2, multi_hop=1, abstention=2)
    corpus_path = corpus.save(folder / "soak.jsonl")
    map_reduce = ('{ name = "map_reduce", max_tokens = 16, merge_max_tokens = 24, '
                  f'max_concurrency = {map_reduce_concurrency} }}')
    text = textwrap.dedent(f"""
        name = "soak"
        [corpus]
        path = "{corpus_path}"
        [grid]
        chunkers = [{{ name = "turn_window", max_turns = 4 }}]
        summarizers = [{{ name = "single_pass", max_tokens = 24 }}, {map_reduce}]
        recallers = ["bm25"]
        [run]
        backends = [{{ preset = "simulated", base_url = "{base_url}", {BACKEND} }}]
        embedders = ["hashing"]
        ks = [1, 5]
        cache = "run"
        """)
    path = folder / "soak.toml"
    path.write_text(text, encoding="utf-8")
    return path


def stable(df: pd.DataFrame) -> pd.DataFrame:
    """Rows without timing metrics or what names the endpoint (cell ids hash the backend's URL)."""
    keep = df[~df["metric"].str.contains("latency")].drop(columns=["cell_id"])
    return keep.sort_values(["pipeline", "conversation_id", "probe_id", "metric"]).reset_index(drop=True)


def _assert_same_rows(got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert len(got) == len(want)
    differ = got["value"].ne(want["value"]) & ~(got["value"].isna() & want["value"].isna())
    shown = pd.concat([got.loc[differ, ["pipeline", "conversation_id", "probe_id", "metric", "value"]],
                       want.loc[differ, "value"].rename("expected")], axis=1)
    assert not differ.any(), f"{int(differ.sum())} rows differ:\n{shown.head(20).to_string()}"
    pd.testing.assert_frame_equal(got, want)


def fault_kind(outcome: str) -> str:
    """What the client sees of a fault the server injected.

    A hang lasts ``hang_s`` = 5 s; the backend's ``timeout_s`` (0.5 s) bounds each attempt, and the
    summarizers' deadlines (120-300 s) bound the whole call without widening it, so the client times
    the attempt out after 0.5 s and retries.
    """
    if outcome in ("429", "500", "503", "529"):
        return f"HTTP {outcome}"
    return {"hang": "timeout", "malformed": "broken body", "cut": "broken body"}[outcome]


def retry_kind(event: dict) -> str:
    """The kind of failure a ``retry`` event of the run log records."""
    if event["status"] is not None:
        return f"HTTP {event['status']}"
    return {"APITimeoutError": "timeout", "JSONDecodeError": "broken body",
            "StreamError": "broken body"}.get(event["error"], event["error"])


def _soak(tmp_path, caplog, conversations: int, sessions: int) -> None:
    caplog.set_level(logging.WARNING, logger="lyra_lab.backends")
    with SimulatedServer(latency_s=0.002) as clean:
        reference = run_experiment(ExperimentSpec.from_toml(soak_toml(tmp_path, clean.base_url, conversations,
                                                                      sessions)), tmp_path / "reference")
        clean_requests = len(clean.chat_log())
    caplog.clear()
    with SimulatedServer(latency_s=0.002, latency_sigma=0.5, fault_rates=FAULTS, retry_after_s=0.02,
                         hang_s=5.0) as faulty:
        spec = ExperimentSpec.from_toml(soak_toml(tmp_path, faulty.base_url, conversations, sessions))
        df = run_experiment(spec, tmp_path / "run")
        log = faulty.chat_log()

    cells = len(spec.pipelines) * conversations
    assert df.attrs["failed_cells"] == []  # zero lost cells
    assert df["cell_id"].nunique() == cells
    events = list(read_log(tmp_path / "run" / "log.jsonl"))
    assert sum(e["event"] == "cell_done" for e in events) == cells
    assert not any(e["event"] == "cell_failed" for e in events)
    _assert_same_rows(stable(df), stable(reference))

    # (a hang, a malformed body or a cut stream may carry status 200: the outcome says what happened)
    failed = [r for r in log if r.outcome != "ok"]
    kinds = {r.outcome for r in failed}
    assert len(failed) >= 0.1 * len(log) and len(kinds) >= 5, (len(failed), len(log), kinds)
    # every answer was paid once: the same distinct prompts as the fault-free run (the cache did the rest)
    assert len(log) - len(failed) == clean_requests
    warnings = [r for r in caplog.records if r.name == "lyra_lab.backends" and "retrying in" in r.getMessage()]
    # one logged retry per failed attempt (a 200 with malformed JSON or a cut stream is a failed attempt too)
    assert len(warnings) == len(log) - clean_requests, (len(warnings), len(log), clean_requests)
    # ... and in the run log: every injected fault has its retry event, of the same kind
    retries = [e for e in events if e["event"] == "retry"]
    assert Counter(map(retry_kind, retries)) == Counter(fault_kind(r.outcome) for r in failed)
    assert {e["cell_id"] for e in retries} <= set(df["cell_id"])
    assert all(1 <= e["attempt"] < e["max_attempts"] == 12 and e["wait_s"] >= 0 for e in retries)
    # a 429 carried Retry-After: 0.02, and the client waited at least that
    assert all(e["retry_after_s"] == 0.02 and e["wait_s"] >= 0.02 for e in retries if e["status"] == 429)


def test_short_soak_20_sessions_with_20_percent_faults(tmp_path, caplog):
    _soak(tmp_path, caplog, conversations=2, sessions=10)


@pytest.mark.soak
def test_long_soak_200_sessions_with_20_percent_faults(tmp_path, caplog):
    _soak(tmp_path, caplog, conversations=4, sessions=50)
