"""The benchmarks' own answer prompts, verbatim, and how each fills its slots from a probe and a context.

Each template below is quoted character for character from its source (cited on each constant and in
``docs/experiments.md``); only the filling of its slots is lyra-lab's, re-expressed from the source:

* ``locomo``: snap-research/LoCoMo ``task_eval/gpt_utils.py`` @0e22967 (``QA_PROMPT``, batch size 1,
  the RAG path): the query is the context, a blank line, then ``QA_PROMPT.format(question)``; a
  category-2 (temporal) question gets LoCoMo's suffix asking for an approximate date.  32 answer tokens,
  temperature 0, as the source asks.
* ``mem0``: mem0ai/mem0 ``evaluation/prompts.py`` @393a4fd (``ANSWER_PROMPT``), its ``{{slot}}`` markers
  filled as the source's Jinja template would be.  mem0 gives each speaker's memories apart; lyra-lab's
  context is one block holding both speakers' lines, so it fills speaker 1's memories and speaker 2's are
  ``[]`` (what mem0 renders for a speaker without memories); the ids are ``speaker_1``/``speaker_2``.
  The source sets no answer cap: ``[qa] max_tokens`` applies.
* ``longmemeval``: xiaowu0162/LongMemEval ``src/generation/run_generation.py`` @283612f (the answer
  template without chain of thought, retrieval on): context, question date and question; the date as
  LongMemEval writes ``question_date`` (``2023/05/30 (Tue) 23:40``), ``unknown`` when the probe has none.
  500 answer tokens (the source's ``gen_length`` default without chain of thought).
"""

from __future__ import annotations

import re

from lyra_lab.corpus import Probe

# snap-research/LoCoMo task_eval/gpt_utils.py @0e229672277f7ccf36dadc50a744a7800769aad2, QA_PROMPT
LOCOMO_QA_PROMPT = """
Based on the above context, write an answer in the form of a short phrase for the following question. Answer with exact words from the context whenever possible.

Question: {} Short answer:
"""
# the same file: a category-2 question is asked with this appended
LOCOMO_DATE_SUFFIX = " Use DATE of CONVERSATION to answer with an approximate date."
LOCOMO_MAX_TOKENS = 32  # run_chatgpt(query, num_gen=1, num_tokens_request=32, ..., temperature=0)

# mem0ai/mem0 evaluation/prompts.py @393a4fd5a6cfeb754857a2229726f567a9fadf36, ANSWER_PROMPT
MEM0_ANSWER_PROMPT = """
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
    """

# xiaowu0162/LongMemEval src/generation/run_generation.py @283612f4ef546716c0c5c047529d728adb3edba8,
# answer_prompt_template (retrieval, no chain of thought, no fact expansion)
LONGMEMEVAL_ANSWER_PROMPT = ("I will give you several history chats between you and a user. Please answer the "
                             "question based on the relevant chat history.\n\n\nHistory Chats:\n\n{}\n\n"
                             "Current Date: {}\nQuestion: {}\nAnswer:")
LONGMEMEVAL_MAX_TOKENS = 500  # gen_length = 500 if not args.cot else 800
LONGMEMEVAL_DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"  # as the dataset writes question_date


def render_locomo(template: str, probe: Probe, context: str) -> str:
    """LoCoMo's query: the context, a blank line, then its QA prompt (category 2 with its date suffix)."""
    question = probe.question + (LOCOMO_DATE_SUFFIX if str(probe.category) == "2" else "")
    return context + "\n\n" + template.format(question)


def render_mem0(template: str, probe: Probe, context: str) -> str:
    """mem0's answer prompt with its ``{{slot}}`` markers filled (see the module docstring for the speakers)."""
    slots = {"speaker_1_user_id": "speaker_1", "speaker_1_memories": context, "speaker_2_user_id": "speaker_2",
             "speaker_2_memories": "[]", "question": probe.question}
    # one pass: a slot's value (a context that holds "{{question}}") is never filled again
    return re.sub(r"\{\{(\w+)\}\}", lambda m: slots[m.group(1)], template)


def render_longmemeval(template: str, probe: Probe, context: str) -> str:
    """LongMemEval's reading prompt: history, the question's date as the dataset writes it, question."""
    date = probe.asked_at.strftime(LONGMEMEVAL_DATE_FORMAT) if probe.asked_at else "unknown"
    return template.format(context, date, probe.question)
