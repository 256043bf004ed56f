"""The simulated server as a judge with set error rates (``SimulatedJudge``), over raw HTTP."""

from __future__ import annotations

import httpx
import pytest

from lyra_lab.backends import SimulatedServer, SimulatedSpec
from lyra_lab.backends.simulated import SimulatedJudge
from lyra_lab.corpus import Probe
from lyra_lab.measures import JUDGE_PROMPTS


def _prompt(name: str, gold: str, answer: str) -> str:
    probe = Probe(id="q", conversation_id="c", question="When did she move?", answer=gold)
    return JUDGE_PROMPTS[name].render(probe, answer)


@pytest.mark.parametrize("name", sorted(JUDGE_PROMPTS))
def test_every_named_prompt_is_read_as_a_judge_prompt(name):
    always = SimulatedJudge(accept_wrong=0.0, accept_right=1.0)
    assert always.reply(_prompt(name, "7 May 2023", "She moved on 7 May 2023.")) == "CORRECT"
    assert always.reply(_prompt(name, "7 May 2023", "It is not 7 May 2023.")) == "WRONG"
    assert always.reply(_prompt(name, "7 May 2023", "7 May 2022")) == "WRONG"
    assert always.reply("Summarize the conversation below.\nAlice moved.") is None  # not a judge prompt


def test_the_acceptance_rates_are_the_ones_set():
    judge = SimulatedJudge(accept_wrong=0.25, accept_right=0.8, accept_wrong_when=(("Be strict:", 0.05),))
    wrong = [judge.reply(_prompt("correct_wrong_v1", f"{i} May 2023", f"{i + 1} May 2023")) for i in range(2000)]
    right = [judge.reply(_prompt("correct_wrong_v1", f"{i} May 2023", f"{i} May 2023")) for i in range(2000)]
    strict = [judge.reply(_prompt("strict_v1", f"{i} May 2023", f"{i + 1} May 2023")) for i in range(2000)]
    assert wrong.count("CORRECT") / 2000 == pytest.approx(0.25, abs=0.03)
    assert right.count("CORRECT") / 2000 == pytest.approx(0.8, abs=0.03)
    assert strict.count("CORRECT") / 2000 == pytest.approx(0.05, abs=0.02)
    with pytest.raises(ValueError, match="accept_wrong must be a probability"):
        SimulatedJudge(accept_wrong=1.5)


def test_the_server_answers_judge_prompts_with_the_verdict_and_others_as_before():
    spec = SimulatedSpec(judge={"accept_wrong": 0.0, "accept_right": 1.0})  # as sent to another process
    assert spec.judge == SimulatedJudge(0.0, 1.0)
    with SimulatedServer(spec) as server:
        def ask(text: str) -> str:
            body = {"model": "m", "messages": [{"role": "user", "content": text}], "max_tokens": 8}
            reply = httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=10).json()
            return reply["choices"][0]["message"]["content"]

        assert ask(_prompt("mem0_locomo", "Lisbon", "She moved to Lisbon.")) == "CORRECT"
        assert ask(_prompt("longmemeval_v1", "Lisbon", "Porto")) == "WRONG"
        assert ask("Alice moved to Lisbon in March. She adopted a cat.") not in ("CORRECT", "WRONG")
