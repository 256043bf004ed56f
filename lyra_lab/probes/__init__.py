"""Probes for a user's own history that a model drafts and checks (planted probes live in ``lyra_lab.corpus``)."""

from lyra_lab.probes._checks import REASONS, Draft, check, judge_supports, parse_drafts
from lyra_lab.probes._draft import PROMPT_NAME, DraftResult, DraftSettings, draft_probes, render_prompt
from lyra_lab.probes._io import endpoint_of, is_local_endpoint, probe_record, save_probes

__all__ = [
    "PROMPT_NAME",
    "REASONS",
    "Draft",
    "DraftResult",
    "DraftSettings",
    "check",
    "draft_probes",
    "endpoint_of",
    "is_local_endpoint",
    "judge_supports",
    "parse_drafts",
    "probe_record",
    "render_prompt",
    "save_probes",
]
