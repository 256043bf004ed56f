"""``CellSetup``: how every cell of a run is replayed, scored and answered, built once from the spec.

The spec (``ExperimentSpec``) is what the experiment file says; the setup is what a cell needs
of it, typed and resolved: the recallers asked each probe, the ``Scoring`` (cutoffs, context
budgets, rules), the answering stage (prompt, backend, how many probes) and the judges.  It is
a frozen value, so a cell is a function of (setup, cell, corpus) and runs the same in a thread,
a worker process or a Ray task.  ``answer_room`` sizes the context of the recallers that are given
the whole memory (``full_context``): the room the answering model's window leaves.
"""

from __future__ import annotations

from dataclasses import dataclass

from lyra_lab.backends import BackendSpec, context_window
from lyra_lab.measures import AnswerRoom, JudgeConfig, Scoring
from lyra_lab.recall import BaseRecaller, Recaller


@dataclass(frozen=True)
class AnswerSetup:
    """Answering probes from the recalled context (scored by EM/F1 under ``scorer``).

    Attributes:
        backend: the answering model; None: the cell's own backend.
        prompt: a name in ``lyra_lab.measures.ANSWER_PROMPTS``.
        max_probes: answer only the first this many probes of each conversation (None: all).
        max_tokens: the answer's length cap.
        scorer: the QA scorer (``squad``, ``locomo``, ``longmemeval``).
        prompts: ``[qa] prompts``: every probe answered under each (empty: ``prompt`` alone).
        repeats: ``[qa] repeats``: each prompt's answer asked this many times, each its own call.
        temperature: of the answering calls.
    """

    backend: BackendSpec | None = None
    prompt: str = "short_v1"
    max_probes: int | None = None
    max_tokens: int = 32
    scorer: str = "squad"
    prompts: tuple[str, ...] = ()
    repeats: int = 1
    temperature: float = 0.0

    @property
    def asked(self) -> tuple[tuple[str, int], ...]:
        """Every ``(prompt, repeat)`` each answered probe is asked under, in order."""
        return tuple((p, r) for p in (self.prompts or (self.prompt,)) for r in range(self.repeats))

    @property
    def varied(self) -> bool:
        """Whether QA rows name their prompt and repeat (``answer_prompt``, ``repeat``): several are asked."""
        return bool(self.prompts) or self.repeats > 1


@dataclass(frozen=True)
class CellSetup:
    """What every cell of a run needs besides its own coordinates (``Cell``).

    Attributes:
        run: the experiment's name (the ``run`` column).
        corpus: the corpus's name (the ``corpus`` column).
        recallers: ``(label, recaller)``, all asked every probe from the same memory.
        scoring: the cutoffs, context budgets and rules every probe is scored with.
        answering: the answering stage, or None when the run answers nothing.
        judges: every judge of the answers (each grades every answer).
        workers: windows a replay summarizes ahead of its owner thread.
        cache: the run's cache mode (``run``, ``user``, ``off``).
        progress: show a cell's progress bar (on a terminal); off where several cells run at once.
    """

    run: str
    corpus: str
    recallers: tuple[tuple[str, Recaller], ...]
    scoring: Scoring
    answering: AnswerSetup | None = None
    judges: tuple[JudgeConfig, ...] = ()
    workers: int = 1
    cache: str = "run"
    progress: bool = False


def answer_room(recallers: tuple[tuple[str, Recaller], ...], answering: AnswerSetup | None,
                backend: BackendSpec) -> AnswerRoom | None:
    """The context budget of the recallers given the whole memory: the room the answerer's window leaves.

    The answerer is ``answering.backend``, else the cell's ``backend``; the prompts and answer cap are
    the answering stage's (without one, ``[qa]``'s defaults: the context a run with QA on would give).
    None when no recaller declares ``whole_memory()``: every context is cut to ``[grid] context_tokens``.
    """
    if not any(isinstance(r, BaseRecaller) and r.whole_memory() for _, r in recallers):
        return None
    answering = answering or AnswerSetup()
    spec = backend if answering.backend is None else answering.backend
    prompts = tuple(dict.fromkeys(prompt for prompt, _ in answering.asked))
    return AnswerRoom(context_window(spec), prompts, answering.max_tokens)
