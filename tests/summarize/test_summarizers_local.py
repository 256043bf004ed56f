"""Each summarizer once against the real bundled local model (SmolLM2-135M on llama.cpp's server)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from lyra_lab.chunking import TurnWindowChunker
from lyra_lab.corpus import Turn
from lyra_lab.summarize import SUMMARIZERS

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
LINES = [
    ("Caroline", "I signed up for the pottery class on Saturday mornings."),
    ("Melanie", "Nice! Is that the one at the community center near the lake?"),
    ("Caroline", "Yes. It starts on June 3rd and costs 40 dollars a month."),
    ("Melanie", "Then let's drive there together the first time."),
]
TURNS = [Turn(f"D1:{i + 1}", "c", "s1", "user" if i % 2 == 0 else "assistant", text,
              T0 + timedelta(minutes=i), speaker) for i, (speaker, text) in enumerate(LINES)]

# Generous deadlines: the test machine may be busy, and the model takes one request at a time.
SPECS = {
    "single_pass": {"max_tokens": 24, "timeout_s": 600},
    "map_reduce": {"max_tokens": 24, "merge_max_tokens": 24, "max_concurrency": 1,
                   "chunk_timeout_s": 600, "merge_timeout_s": 600},
    "refine": {"max_tokens": 24, "step_timeout_s": 600},
}
CALLS = {"single_pass": 1, "map_reduce": 3, "refine": 2}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SPECS))
def test_summarizer_on_the_real_local_model(name, local_backend):
    chunks = TurnWindowChunker(max_turns=2).chunk(TURNS)
    assert len(chunks) == 2
    summary = SUMMARIZERS.build({"name": name, **SPECS[name]}).summarize(chunks, local_backend)
    assert summary.text.strip()
    assert not summary.partial and summary.errors == ()
    assert len(summary.calls) == CALLS[name]
    for completion in summary.calls:
        # usage reported by the llama.cpp server itself, not counted locally
        assert not completion.usage.estimated and completion.usage.prompt_tokens > 20
        assert 0 < completion.usage.completion_tokens <= 24
        assert not completion.simulated and completion.backend == local_backend.name
    assert summary.turn_ids == tuple(t.id for t in TURNS)
