"""Rollup prompts, as data.

Each prompt is ONE user message holding the instruction *and* the content:
the tiny local model (SmolLM2-135M) only follows instructions given that way.
Placeholders are ``str.format`` fields.
"""

from __future__ import annotations

DIGEST = (
    "Summarize these memory notes from {period} in 2-4 sentences. Keep names, dates, numbers, "
    "plans, preferences and decisions. Write plain prose without any preamble.\n\n"
    "Notes:\n{content}\n\nSummary:"
)

GIST = (
    "Write a short gist (2-4 sentences) of this chat session. Keep names, dates, numbers, plans "
    "and preferences. Write plain prose without any preamble.\n\n"
    "{previous}Messages:\n{content}\n\nGist:"
)
GIST_PREVIOUS = "Gist of the earlier part of the session:\n{gist}\n\n"

SUMMARY = (
    "Update the running summary of a conversation with the new lines. Keep names, dates, "
    "numbers, plans and preferences. Return only the new summary, in plain prose.\n\n"
    "Current summary:\n{summary}\n\nNew lines:\n{content}\n\nNew summary:"
)

FACTS = (
    "List the facts stated in this conversation, one per line, each in the form "
    "'subject: fact' (for example 'Alice job: works as a nurse'). Keep each fact short and "
    "atomic. If there are no facts, write NONE.\n\nConversation:\n{content}\n\nFacts:"
)

#: Generation parameters for every rollup call (deterministic, short).
PARAMS = {"temperature": 0.0}
