"""Asking before a command does something a user should agree to: sending text away, a long or costly run.

``agree(notice, question, yes, refusal)`` prints the notice to stderr, and unless ``--yes`` was
given asks the question on a terminal; off a terminal (a script, CI) it does not block on a
prompt nobody can answer: it stops with one line saying to pass ``--yes``.

``ask_on_terminal`` is that question for conversation text sent to a place that is not this machine:
the road every run takes (``lyra_lab.experiments.run_experiment``) asks it, for every command, and keeps
in the user cache which endpoints a user agreed to send a corpus to, so a run asks the first time only.
"""

from __future__ import annotations

import sys

from lyra_lab._registry import ConfigError


def agree(notice: str, question: str, yes: bool, refusal: str) -> None:
    """Print ``notice``; go on with ``yes`` or a "y" at the prompt, else raise ``ConfigError(refusal)``.

    Raises:
        ConfigError: no agreement (also when stdin is not a terminal and ``yes`` is false).
    """
    print(f"notice: {notice}", file=sys.stderr)
    if yes:
        return
    answer = input(f"{question} [y/N] ") if sys.stdin.isatty() else ""
    if answer.strip().lower() not in ("y", "yes"):
        raise ConfigError(refusal)


def ask_on_terminal(endpoint: str, corpus: str) -> None:
    """The CLI's ``Ask`` (``lyra_lab.experiments.RunOptions.ask``): agree on a terminal to send text to ``endpoint``.

    Raises:
        ConfigError: no agreement (off a terminal: pass ``--yes``).
    """
    agree(f"this run sends conversation text of {corpus} to {endpoint}.", "send it?", False,
          f"not sending conversation text to {endpoint}: pass --yes to agree")
