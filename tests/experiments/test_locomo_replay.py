"""A real LoCoMo conversation replays end to end (fake LLM, hashing embedder for speed)."""

from __future__ import annotations

from datetime import datetime

from lyra_lab.backends import FakeLLM
from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment
from lyra_lab.runs import read_log
from tests.helpers.locomo import needs_locomo


@needs_locomo
def test_a_locomo_conversation_replays_through_summaries_and_a_time_ladder(tmp_path, registries):
    toml = tmp_path / "locomo.toml"
    toml.write_text("""
name = "locomo-one"
[corpus]
path = "dataset:locomo"
format = "locomo"
conversations = ["conv-26"]
[grid]
chunkers = [{ name = "turn_window", max_turns = 12 }]
summarizers = ["concat"]
rollups = ["none", { name = "time_ladder" }]
budgets = [1200]
recallers = ["bm25", "dense"]
[run]
backends = ["fake"]
embedders = ["hashing"]
ks = [5, 10]
cache = "off"
""", encoding="utf-8")
    spec = ExperimentSpec.from_toml(toml, registries)
    llm = FakeLLM()
    df = run_experiment(spec, tmp_path / "run", None, Injected(backends={"fake": llm}))

    assert set(df["conversation_id"]) == {"conv-26"} and df["cell_id"].nunique() == 2
    probes = df[df["probe_id"] != ""]
    assert probes["probe_id"].nunique() == 199  # every probe of conv-26 was asked
    assert set(probes["category"]) == {"1", "2", "3", "4", "5"}
    recall = probes[probes["metric"] == "evidence_recall@10"].groupby(["rollup", "recaller"])["value"].mean()
    assert recall[("none", "bm25")] > 0.2  # all raw turns stay in memory without a rollup
    assert recall[("time_ladder", "bm25")] < recall[("none", "bm25")]  # folded into fake digests
    conv = df[df["probe_id"] == ""].drop_duplicates(["cell_id", "metric"]).set_index(["rollup", "metric"])["value"]
    assert conv[("none", "summarize.calls")] == conv[("time_ladder", "summarize.calls")] >= 19  # one per session
    assert conv[("none", "rollup.calls")] == 0 and conv[("time_ladder", "rollup.calls")] > 0
    assert conv[("time_ladder", "memory_tokens")] <= 1200 * 1.25 < conv[("none", "memory_tokens")]
    ladder_cell = df[df["rollup"] == "time_ladder"]["cell_id"].iloc[0]

    events = list(read_log(tmp_path / "run" / "log.jsonl"))
    events = [e for e in events if e.get("cell_id") == ladder_cell]
    reports = [e for e in events if e["event"] == "rollup_report"]
    nows = [datetime.fromisoformat(e["now"]) for e in reports]
    assert nows == sorted(nows) and (nows[-1] - nows[0]).days > 150  # months of chat on the replay clock
    assert all(2023 <= n.year <= 2024 for n in nows)
    periods = {e["period"] for e in events if e["event"] == "digest_written" and e["period"]}
    # day digests of many different days, each folded when its day was old on the replay clock
    assert len(periods) >= 5 and all(len(p) == 10 and p < nows[-1].date().isoformat() for p in periods)
    # the two cells send identical summary prompts: the fake saw each cell's calls
    assert len(llm.calls) == sum(conv[(r, m)] for r in ("none", "time_ladder") for m in ("summarize.calls", "rollup.calls"))
