"""Differential tests: lyra-lab's benchmark-named answer prompts against rewrites of the benchmarks' own code.

The templates below are this module's own copies of the upstream text (not lyra-lab's constants), so a
drift in lyra-lab's copy fails here:

* LoCoMo: snap-research/LoCoMo ``task_eval/gpt_utils.py`` @0e22967, ``QA_PROMPT`` and ``get_gpt_answers``
  (batch size 1, RAG: ``query = query_conv + '\\n\\n' + QA_PROMPT.format(question)``, category 2 with its
  date suffix, ``num_tokens_request=32``, ``temperature=0``).
* mem0: mem0ai/mem0 ``evaluation/prompts.py`` @393a4fd, ``ANSWER_PROMPT``, rendered with Jinja2's
  ``Template(...).render(...)`` as mem0's evaluation does; speaker 2 without memories (``json.dumps([])``).
* LongMemEval: xiaowu0162/LongMemEval ``src/generation/run_generation.py`` @283612f, the answer template
  without chain of thought, ``format(history, question_date, question)``, ``max_tokens = gen_length = 500``.

lyra-lab's side goes through the real path: ``answer_probe`` on a recording fake backend (``FakeLLM``),
which shows the text sent and the call's parameters.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2 import Template

from lyra_lab.backends import FakeLLM
from lyra_lab.corpus import Probe
from lyra_lab.measures import ANSWER_PROMPTS, answer_probe

UP_LOCOMO = """
Based on the above context, write an answer in the form of a short phrase for the following question. Answer with exact words from the context whenever possible.

Question: {} Short answer:
"""  # noqa: E501

UP_MEM0 = """
    You are an intelligent memory assistant tasked with retrieving accurate information from conversation memories.

    # CONTEXT:
    You have access to memories from two speakers in a conversation. These memories contain 
    timestamped information that may be relevant to answering the question.

    # INSTRUCTIONS:
    1. Carefully analyze all provided memories from both speakers
    2. Pay special attention to the timestamps to determine the answer
    3. If the question asks about a specific event or fact, look for direct evidence in the memories
    4. If the memories contain contradictory information, prioritize the most recent memory
    5. If there is a question about time references (like "last year", "two months ago", etc.), 
       calculate the actual date based on the memory timestamp. For example, if a memory from 
       4 May 2022 mentions "went to India last year," then the trip occurred in 2021.
    6. Always convert relative time references to specific dates, months, or years. For example, 
       convert "last year" to "2022" or "two months ago" to "March 2023" based on the memory 
       timestamp. Ignore the reference while answering the question.
    7. Focus only on the content of the memories from both speakers. Do not confuse character 
       names mentioned in memories with the actual users who created those memories.
    8. The answer should be less than 5-6 words.

    # APPROACH (Think step by step):
    1. First, examine all memories that contain information related to the question
    2. Examine the timestamps and content of these memories carefully
    3. Look for explicit mentions of dates, times, locations, or events that answer the question
    4. If the answer requires calculation (e.g., converting relative time references), show your work
    5. Formulate a precise, concise answer based solely on the evidence in the memories
    6. Double-check that your answer directly addresses the question asked
    7. Ensure your final answer is specific and avoids vague time references

    Memories for user {{speaker_1_user_id}}:

    {{speaker_1_memories}}

    Memories for user {{speaker_2_user_id}}:

    {{speaker_2_memories}}

    Question: {{question}}

    Answer:
    """  # noqa: W291  (quoted verbatim, trailing spaces included)

UP_LME = ("I will give you several history chats between you and a user. Please answer the question based on the "
          "relevant chat history.\n\n\nHistory Chats:\n\n{}\n\nCurrent Date: {}\nQuestion: {}\nAnswer:")


def up_locomo(question: str, category: object, context: str) -> str:
    """get_gpt_answers, batch size 1, RAG: the question (category 2 with its suffix) after the context."""
    if category == 2:
        question = question + " Use DATE of CONVERSATION to answer with an approximate date."
    return context + "\n\n" + UP_LOCOMO.format(question)


def up_mem0(question: str, context: str) -> str:
    """mem0's evaluation renders ANSWER_PROMPT with Jinja2; speaker 2 has no memories here."""
    return Template(UP_MEM0).render(speaker_1_user_id="speaker_1", speaker_1_memories=context,
                                    speaker_2_user_id="speaker_2", speaker_2_memories=json.dumps([], indent=4),
                                    question=question)


def up_lme(question: str, question_date: str, history: str) -> str:
    """prepare_prompt's last step for a retrieval run without chain of thought."""
    return UP_LME.format(history, question_date, question)


def sent(prompt: str, probe: Probe, context: str) -> tuple[str, dict]:
    """What lyra-lab sends for ``probe`` under ``prompt``: the text and the call's parameters."""
    llm = FakeLLM(outputs=["x"])
    seen: dict = {}
    original = llm.complete

    def complete(messages, **params):
        seen.update(params)
        return original(messages, **params)

    llm.complete = complete  # type: ignore[method-assign]
    answer_probe(probe, context, llm, prompt, max_tokens=99)
    return llm.calls[0][-1]["content"], seen


TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)
WHEN = st.datetimes(datetime(2020, 1, 1), datetime(2026, 1, 1)).map(lambda d: d.replace(tzinfo=timezone.utc))


@settings(max_examples=60, deadline=None)
@given(question=TEXT, context=TEXT, category=st.sampled_from([1, 2, 3, 4, None, "temporal"]), asked=WHEN)
def test_every_benchmark_prompt_renders_as_its_source_does(question, context, category, asked):
    probe = Probe(id="p", conversation_id="c", question=question, answer="a", category=category, asked_at=asked)
    text, params = sent("locomo", probe, context)
    assert text == up_locomo(question, category, context)
    assert params["max_tokens"] == 32 and params["temperature"] == 0
    text, params = sent("mem0", probe, context)
    assert text == up_mem0(question, context)
    assert params["max_tokens"] == 99  # mem0 sets no cap: [qa] max_tokens
    text, params = sent("longmemeval", probe, context)
    assert text == up_lme(question, asked.strftime("%Y/%m/%d (%a) %H:%M"), context)
    assert params["max_tokens"] == 500


def test_a_context_holding_a_slot_marker_is_sent_as_it_is():
    probe = Probe(id="p", conversation_id="c", question="where?", answer="a")
    for context in ("{{question}} {{speaker_2_memories}}", "{} {0} {question}"):
        assert sent("mem0", probe, context)[0] == up_mem0("where?", context)
        assert sent("locomo", probe, context)[0] == up_locomo("where?", None, context)
        assert sent("longmemeval", probe, context)[0] == up_lme("where?", "unknown", context)


def test_longmemevals_date_reads_as_the_datasets_question_date_and_unknown_without_one():
    probe = Probe(id="p", conversation_id="c", question="q?", answer="a",
                  asked_at=datetime(2023, 5, 30, 23, 40, tzinfo=timezone.utc))
    assert "Current Date: 2023/05/30 (Tue) 23:40\n" in sent("longmemeval", probe, "ctx")[0]
    bare = Probe(id="p", conversation_id="c", question="q?", answer="a")
    assert "Current Date: unknown\n" in sent("longmemeval", bare, "ctx")[0]


def test_the_named_prompts_keep_the_old_names_and_cite_their_sources():
    assert list(ANSWER_PROMPTS)[:2] == ["short_v1", "dated_v1"]
    for name in ("locomo", "mem0", "longmemeval"):
        assert "@" in ANSWER_PROMPTS[name].source and "/" in ANSWER_PROMPTS[name].source
