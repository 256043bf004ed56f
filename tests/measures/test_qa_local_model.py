"""answer_probe and judge_answer against the real bundled local model (small max_tokens)."""

import pytest

from lyra_lab.corpus import Probe
from lyra_lab.measures import answer_probe, judge_answer

pytestmark = pytest.mark.slow


def test_answer_and_judge_on_local_model(local_backend):
    probe = Probe(id="p", conversation_id="c", question="What is the name of Ana's dog?", answer="Biscuit")
    context = "[2024-03-01] Ana: We adopted a beagle puppy and named him Biscuit."
    completion = answer_probe(probe, context, local_backend, max_tokens=16)
    assert isinstance(completion.text, str) and completion.text.strip()
    assert not completion.text.lower().startswith("answer:")
    # the server reports usage: the prompt holds the context and question, the reply at most 16 tokens
    assert completion.usage.prompt_tokens > 20 and 1 <= completion.usage.completion_tokens <= 16
    verdict = judge_answer(probe, completion.text, local_backend)  # its prompt's need: 8 (below is refused)
    assert verdict.score in (0, 1) and verdict.raw == verdict.completion.text
    assert verdict.prompt == "correct_wrong_v1"
