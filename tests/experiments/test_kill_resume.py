"""Kill -9 a running experiment after some cells finished; the re-run loses and duplicates nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd

from lyra_lab.backends import FakeLLM
from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment
from lyra_lab.runs import read_log

# The child defines the same stand-in summarizer as conftest.py (it cannot import test modules).
CHILD = textwrap.dedent("""
    import sys, time
    from dataclasses import dataclass
    from lyra_lab._registry import Registry
    from lyra_lab.backends import FakeLLM
    from lyra_lab.chunking import CHUNKERS
    from lyra_lab.experiments import ExperimentSpec, Injected, RunOptions, run_experiment
    from lyra_lab.recall import RECALLERS
    from lyra_lab.replay import TRIGGERS, Registries
    from lyra_lab.rollup import ROLLUPS
    from lyra_lab.summarize._types import Summary

    SUMMARIZERS = Registry("summarizer")

    @SUMMARIZERS.register("concat")
    @dataclass(frozen=True)
    class Concat:
        max_tokens: int = 32

        def summarize(self, chunks, backend, focus=None, on_event=None):
            text = "".join(c.text for c in chunks)
            completion = backend.complete([{"role": "user", "content": "Summarize:\\n" + text}],
                                          max_tokens=self.max_tokens)
            ids = tuple(dict.fromkeys(t for c in chunks for t in c.turn_ids))
            return Summary(text=completion.text, turn_ids=ids, calls=(completion,))

    @SUMMARIZERS.register("per_chunk")
    @dataclass(frozen=True)
    class PerChunk:
        def summarize(self, chunks, backend, focus=None, on_event=None):
            calls = [backend.complete([{"role": "user", "content": "Summarize:\\n" + c.text}]) for c in chunks]
            merge = backend.complete([{"role": "user", "content": "Merge:\\n" + "\\n".join(c.text for c in calls)}])
            ids = tuple(dict.fromkeys(t for c in chunks for t in c.turn_ids))
            return Summary(text=merge.text, turn_ids=ids, calls=(*calls, merge))

    class Slow(FakeLLM):
        def complete(self, messages, **params):
            time.sleep(0.1)
            return super().complete(messages, **params)

    regs = Registries(CHUNKERS, SUMMARIZERS, ROLLUPS, RECALLERS, TRIGGERS)
    spec = ExperimentSpec.from_toml(sys.argv[1], regs)
    run_experiment(spec, sys.argv[2], RunOptions(progress=False), Injected(backends={"fake": Slow()}))
""")


def kill_after_rows(toml, run, script, at_least: int) -> set[str]:
    """Run ``CHILD`` on ``toml`` into ``run``, SIGKILL it once ``at_least`` cells have rows; their ids."""
    script.write_text(CHILD, encoding="utf-8")
    child = subprocess.Popen([sys.executable, str(script), str(toml), str(run)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            if len(list((run / "rows").glob("*.jsonl"))) >= at_least or child.poll() is not None:
                break
            time.sleep(0.01)
        assert child.poll() is None, f"child ended before it was killed: {child.stderr.read().decode()[-2000:]}"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    return {p.stem for p in (run / "rows").glob("*.jsonl")}


def test_sigkill_mid_run_then_resume_equals_an_uninterrupted_run(write_toml, registries, tmp_path):
    toml = write_toml()
    spec = ExperimentSpec.from_toml(toml, registries)
    reference = run_experiment(spec, tmp_path / "reference", None, Injected(backends={"fake": FakeLLM()}))

    run = tmp_path / "run"
    finished = kill_after_rows(toml, run, tmp_path / "child.py", at_least=3)
    assert 3 <= len(finished) < 8

    resumed_llm = FakeLLM()
    resumed = run_experiment(spec, run, None, Injected(backends={"fake": resumed_llm}))
    left = reference[~reference["cell_id"].isin(finished) & (reference["metric"] == "summarize.calls")]
    assert len(resumed_llm.calls) == left.drop_duplicates("cell_id")["value"].sum()  # finished cells not redone
    assert not resumed.duplicated(["pipeline", "conversation_id", "probe_id", "metric"]).any()

    def stable(df):  # the attempt that wrote a row differs by design
        keep = df[~df["metric"].str.contains("latency")].drop(columns=["attempt"])
        return keep.sort_values(["cell_id", "pipeline", "probe_id", "metric"]).reset_index(drop=True)

    pd.testing.assert_frame_equal(stable(resumed), stable(reference))
    events = [e["event"] for e in read_log(run / "log.jsonl")]  # still parseable after the kill
    assert events.count("cell_done") == 8
    assert not list((run / "rows").glob(".*.tmp"))
