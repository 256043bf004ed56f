"""Benchmark prompts are fixed by their seed, near their token target, and built from real sessions."""

from __future__ import annotations

from pathlib import Path

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import count_tokens
from lyra_lab.bench import corpus_prompts, prompts_sha256, synthetic_prompts
from lyra_lab.corpus import load

DATA = Path(__file__).parents[2] / "datasets" / "synthetic_small.jsonl"


@pytest.fixture(scope="module")
def corpus():
    return load(DATA)


def test_corpus_prompts_are_seeded_summaries_of_sessions_within_budget(corpus):
    a = corpus_prompts(corpus, 40, prompt_tokens=200, seed=3)
    b = corpus_prompts(corpus, 40, prompt_tokens=200, seed=3)
    c = corpus_prompts(corpus, 40, prompt_tokens=200, seed=4)
    assert prompts_sha256(a) == prompts_sha256(b) != prompts_sha256(c)
    sessions = {s.id: s for conv in corpus.conversations for s in conv.sessions}
    assert len({p.id for p in a}) == 40  # 32 sessions, then cycled with a suffix
    for p in a:
        (message,) = p.messages
        assert message["role"] == "user"
        assert message["content"].endswith("Summarize the conversation above in two sentences.")
        session = sessions[p.id.split("#")[0]]
        assert session.turns[0].text[:30] in message["content"]  # the session's own transcript, from the top
        assert p.prompt_tokens == count_tokens(message["content"]) <= 200 + 2
        assert p.prompt_tokens > 100  # cut near the budget, not far below it


def test_synthetic_prompts_hit_their_length_and_are_seeded():
    a = synthetic_prompts(3, prompt_tokens=120, seed=1)
    assert [p.id for p in a] == ["synthetic-0", "synthetic-1", "synthetic-2"]
    assert all(110 <= p.prompt_tokens <= 122 for p in a)
    assert len({p.messages[0]["content"] for p in a}) == 3
    assert prompts_sha256(a) == prompts_sha256(synthetic_prompts(3, prompt_tokens=120, seed=1))


@pytest.mark.parametrize("n, tokens", [(0, 100), (3, 0), (2.5, 100)])
def test_bad_sizes_are_config_errors(n, tokens):
    with pytest.raises(ConfigError):
        synthetic_prompts(n, prompt_tokens=tokens)
