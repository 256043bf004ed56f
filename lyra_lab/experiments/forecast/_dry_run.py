"""A dry run of a grid: every cell replayed for real against stand-in models, to count the model work.

``plan`` (``_forecast``) needs, before anything is started, the calls and tokens each backend
will be asked for and the texts each embedder will embed.  Rather than a second, hand-kept
model of every chunker, summarizer, rollup and answering stage, the dry run runs the real
cells (``run_cell``) with the real strategies and counts what reaches the models.  It runs
what each cell's kind allows (``CellKind.dry``): a pipeline's cell itself, a memory system's
cell with the system replaced by what it declares (``cells._system_stand_in``), since a plan runs
nothing outside lyra-lab's process:

* a backend that sends text somewhere (the bundled local server, a cloud API) is replaced by a
  ``StandIn`` that answers at once with the first words of its prompt, as long as the call
  allows (``reply="high"``: ``max_tokens``) or short (``reply="low"``: ``LOW_REPLY_TOKENS``), and
  counts prompt and completion tokens with the model's tokenizer (exact for OpenAI models, an
  o200k estimate otherwise).  A strategy whose calls do not depend on what the model writes
  (single_pass, the map stage of map_reduce, answering and judging) makes the same calls either
  way; one that does (refine's prompts grow with its running summary, a merge over the partial
  summaries, a rollup over summaries) gives a low and a high figure, the bounds of the plan;
* an in-process backend (a fake, one you injected that sends nothing anywhere) is asked for real:
  it costs nothing and answers as it will in the run, so its figures are exact;
* every embedder is a ``RecordingEmbedder``: a record of each distinct text asked, by kind
  (``passage``, ``query``), with the run's vectors for the texts the shared embedding cache holds
  (read under the real embedder's identity, never written) and deterministic hashed ones for the rest.

The run's caches answer the dry run as they will answer the run: a stand-in carries the identity
the run's backend keys the response cache by (``grid.run_backend``), and the dry run reads a copy
of the response cache the run will read (``grid.response_cache_dir``: a resumed folder's
``cache/``, the user cache with ``cache = "user"``).  A call it answers is not counted and its
answer is the run's, so the prompts after it (a rollup over cached summaries, answers over cached
vectors) are the run's too: the plan of an interrupted run counts what it kept as done.

Memory entries a pipeline writes from the turns (chunks, raw turns) are the real texts, so the
passages to embed are exact for LLM-free pipelines; a summary's text is the stand-in's, so its
count is exact and its tokens are bounded.  Dense recall order on hashed vectors differs from
the real embedder's, so the answering prompts' context tokens are an estimate (bounded by the
pipeline's context budget).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import re
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, NamedTuple, Sequence, SupportsInt

import numpy as np

from lyra_lab.backends import (Backend, BackendSpec, CachedEmbedder, Capabilities, Completion, Embedder, EmbedderSpec,
                               EmbeddingCache, GgufCounts, HashingEmbedder, Message, Price, Usage, gguf_counts,
                               token_counter)
from lyra_lab.corpus import Corpus
from lyra_lab.experiments.cells import Cell, CellSetup, run_cell
from lyra_lab.experiments.grid import (Injected, Resources, embedding_cache_path, run_backend, run_embedder,
                                       spec_label)

Reply = Literal["low", "high"]
#: A stand-in's reply in ``reply="low"`` mode: this many tokens, or the call's ``max_tokens`` if smaller.
LOW_REPLY_TOKENS = 24
#: A call with no ``max_tokens`` gets this many in ``reply="high"`` mode.
DEFAULT_MAX_TOKENS = 512
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class BackendFacts:
    """What a backend spec is, learnt without starting it.

    Attributes:
        label: the spec's short name (``local``, ``openai/gpt-4o-mini``).
        model: the model name (``local``: the bundled GGUF).
        endpoint: where conversation text goes (a URL without credentials); None: nowhere (in process).
        local: the endpoint is this machine (or nothing leaves the process).
        price: USD per million tokens (None: free, in process).
        max_concurrency: calls the client allows at once (None: no bound).
        in_process: answers in this process (asked for real by the dry run).
        spec: the spec itself.
        pieces: it counts tokens as whitespace-separated pieces (the simulated server), not with a tokenizer.
        gguf: a llama.cpp server of a GGUF (the ``local`` preset): counted with the model's own vocabulary
            through its chat template, as that server counts (``lyra_lab.backends.gguf_counts``).
        identity: what keys its answers in the run's response cache, read from the backend the run builds
            (``grid.run_backend``, which starts nothing); a stand-in carries it, so a call the run's cache answers
            is answered in the dry run too, and not counted (None: unknown, nothing is answered).
    """

    label: str
    model: str
    endpoint: str | None
    local: bool
    price: Price | None
    max_concurrency: int | None
    in_process: bool
    spec: BackendSpec = ""
    pieces: bool = False
    gguf: bool = False
    identity: Mapping[str, object] | None = None


def backend_facts(spec: BackendSpec, injected: Injected, cache: str = "run") -> BackendFacts:
    """The ``BackendFacts`` of ``spec``; the ``local`` preset is described without starting its server.

    ``cache``: the run's cache mode (an injected backend's identity carries its label unless ``"off"``).
    """
    from lyra_lab.backends import make_backend
    from lyra_lab.probes import is_local_endpoint

    label = spec_label(spec)
    backend = injected.backends.get(label)
    preset = ""
    if backend is None:
        data = {"preset": spec} if isinstance(spec, str) else dict(spec)
        preset = str(data.get("preset", "")).partition("/")[0]
        if preset == "local":
            return BackendFacts(label, "local (bundled GGUF on llama-cpp, 127.0.0.1)", "http://127.0.0.1 (local server)",
                                True, Price("local", 0.0, 0.0), 1, False, spec, gguf=True,
                                identity=_run_identity(spec, injected, cache))
        backend = make_backend({k: v for k, v in data.items() if k != "cache"})  # a client: opens no connection
    caps = backend.capabilities
    return BackendFacts(label, backend.model, caps.endpoint, is_local_endpoint(caps.endpoint), caps.price,
                        caps.max_concurrency, caps.endpoint is None, spec, pieces=preset == "simulated",
                        identity=_run_identity(spec, injected, cache))


def _run_identity(spec: BackendSpec, injected: Injected, cache: str) -> Mapping[str, object] | None:
    """The identity the run's response cache keys ``spec``'s answers by (None: its backend cannot be built here)."""
    from lyra_lab._registry import ConfigError

    try:
        return dict(run_backend(spec, injected.backends, cache).capabilities.identity)
    except (ConfigError, ImportError, OSError):  # a missing extra or model file: the plan says so elsewhere
        return None


@dataclass
class CallTally:
    """Calls and tokens one backend was asked for (thread-safe: summarizers call from worker threads)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, prompt_tokens: int, completion_tokens: int) -> None:
        with self._lock:
            self.calls += 1
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens


class StandIn:
    """A backend that answers at once with the first words of its prompt and counts the tokens (see the module).

    Args:
        facts: the backend it stands in for (its label and model name the completions).
        reply: ``low`` (short answers) or ``high`` (answers as long as each call allows).
        tally: where its calls are counted.
        salt: a word that starts every answer (the cell's number): different cells' answers differ.
    """

    def __init__(self, facts: BackendFacts, reply: Reply, tally: CallTally, salt: str = ""):
        self.name, self.model = facts.label, facts.model
        caps = Capabilities.in_process(facts.label, facts.model, simulated=True, price=Price(facts.model, 0.0, 0.0))
        # the run's identity: the run's response cache answers the stand-in what it will answer the backend
        self.capabilities = caps if facts.identity is None else dataclasses.replace(caps, identity=dict(facts.identity))
        self._facts, self._counted = facts, False
        self._gguf: GgufCounts | None = None
        self._count: Callable[[str], int] = len
        self._reply, self._tally, self._salt = reply, tally, salt

    def _counters(self) -> None:
        """Its token counts, made by the first call: an LLM-free grid never reads a GGUF (nor needs llama.cpp)."""
        if not self._counted:
            facts = self._facts
            # the local server's own count (its vocabulary, its chat template) where the model file has one
            self._gguf = _gguf_counts(facts) if facts.gguf else None
            self._count = (self._gguf.text if self._gguf is not None
                           else _count_pieces if facts.pieces else token_counter(facts.model))
            self._counted = True

    def complete(self, messages: Sequence[Message], *, deadline: float | None = None, **params: object) -> Completion:
        """An immediate answer of the first words of the last message, as long as ``reply`` says."""
        self._counters()
        asked = params.get("max_tokens") or DEFAULT_MAX_TOKENS
        if not isinstance(asked, (SupportsInt, str)):
            raise TypeError(f"max_tokens must be a number, got {type(asked).__name__}")
        limit = int(asked)
        want = limit if self._reply == "high" else min(limit, LOW_REPLY_TOKENS)
        words = _WORD.findall(messages[-1].get("content", "")) if messages else []
        text = " ".join((words or ["memory"]) * (1 + want // max(1, len(words))))
        # the salt (the cell's number) keeps two cells' summaries distinct texts, as real ones are
        text = _first_tokens(f"{self._salt} {text}" if self._salt else text, want, self._count)
        prompt = (self._gguf.prompt(messages) if self._gguf is not None
                  else sum(self._count(m.get("content", "")) for m in messages))
        completion = self._count(text)
        self._tally.add(prompt, completion)
        return Completion(text=text, usage=Usage(prompt_tokens=prompt, completion_tokens=completion, calls=1),
                          latency_s=0.0, backend=self.name, model=self.model, simulated=True, finish_reason="stop")


def _gguf_counts(facts: BackendFacts) -> GgufCounts | None:
    """The ``local`` preset's GGUF counts (its ``model_path``, else the bundled model); None: estimate."""
    data = {} if isinstance(facts.spec, str) else dict(facts.spec)
    return gguf_counts(data.get("model_path"))


def _count_pieces(text: str) -> int:
    from lyra_lab.backends.simulated import count_pieces

    return count_pieces([{"content": text}])


def _first_tokens(text: str, n: int, count: Callable[[str], int]) -> str:
    """About the first ``n`` tokens of ``text`` (whole words, never more than ``n`` tokens)."""
    words = text.split(" ")
    lo, hi = 0, min(len(words), n)  # a word is at least one token
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(" ".join(words[:mid])) <= n:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[: max(1, lo)])


class RecordingEmbedder:
    """A record of each distinct text asked, by kind; the run's vectors where the shared cache holds them, else hashed.

    Args:
        label: the embedder's label.
        dim: the hashed vectors' width when ``like`` gives none.
        like: the embedder the run builds (``grid.run_embedder``): the shared embedding cache is read under its
            identity (never written), so dense recall over cached texts orders as in the run and the answering
            prompts it builds are the run's, which the response cache then answers (None: hashed vectors only).
        store: the shared embedding cache (None: hashed vectors only).
    """

    def __init__(self, label: str, dim: int = 64, like: Embedder | None = None, store: EmbeddingCache | None = None):
        width = like.identity().get("dim") if like is not None else None
        self._real = (CachedEmbedder(like, store).identity_key, store) \
            if like is not None and store is not None and isinstance(width, int) else None
        self.name = f"dry-run:{label}"
        self.dim = int(width) if self._real is not None and isinstance(width, int) else dim
        self._inner = HashingEmbedder(self.dim)
        self.texts: dict[str, dict[str, None]] = {"passage": {}, "query": {}}
        self._lock = threading.Lock()

    def identity(self) -> dict[str, Any]:
        return {"embedder": self.name, "dim": self.dim}

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        with self._lock:
            self.texts.setdefault(kind, {}).update(dict.fromkeys(texts))
        out = self._inner.embed(texts, kind=kind)
        if self._real is not None and len(texts):
            key, store = self._real
            shas = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
            kept = store.get_many(key, kind, shas)
            for i, sha in enumerate(shas):
                if sha in kept:
                    out[i] = kept[sha]
        return out


@dataclass(frozen=True)
class CellWork:
    """What one cell asked of the models in the dry run.

    Attributes:
        cell: the cell.
        turns: turns of its conversation.
        probes: probes asked.
        calls: backend label → ``(calls, prompt tokens, completion tokens)``.
        wall_s: seconds the dry run of the cell took (the harness's own work, models aside).
    """

    cell: Cell
    turns: int
    probes: int
    calls: Mapping[str, tuple[int, int, int]]
    wall_s: float


@dataclass(frozen=True)
class DryRun:
    """The dry run of some cells: each cell's model work, and the texts each embedder was asked to embed.

    Attributes:
        cells: one ``CellWork`` per cell, in order.
        texts: embedder label → kind → the distinct texts (over all cells: the cache embeds each once).
        wall_s: seconds the whole dry run took.
    """

    cells: tuple[CellWork, ...]
    texts: Mapping[str, Mapping[str, tuple[str, ...]]]
    wall_s: float


class _NullLog:
    def event(self, event: str, /, **fields: object) -> None:
        """Discard the event (a dry run writes no log)."""


class DryRunModels(NamedTuple):
    """The models a dry run stands in for (or, in process, asks for real).

    Attributes:
        backends: backend label → its facts (every backend a cell, the answering stage or a judge names).
        embedders: the embedder specs of the grid.
        injected: the run's injected objects (in-process backends among them are asked for real).
        answered_from: the folder of the response cache the run will read (a resumed folder's ``cache/``, the
            user cache, a rescore's restored export): a call it answers is not counted, as the run will not pay
            it (None: no cache).
        cache: the run's cache mode; unless ``"off"`` the dry run keeps a response cache of its own as the run
            does (a copy of ``answered_from``, or an empty one), so a prompt two cells ask alike is paid once.
    """

    backends: Mapping[str, BackendFacts]
    embedders: Sequence[EmbedderSpec]
    injected: Injected
    answered_from: Path | None = None
    cache: str = "off"


def dry_run(setup: CellSetup, cells: Sequence[Cell], corpus: Corpus, models_: DryRunModels,
            reply: Reply = "low") -> DryRun:
    """Run ``cells`` with stand-in models (see the module docstring) and count their model work.

    Args:
        setup: the cells' setup of the run (without progress bars).
        cells: the cells to run.
        corpus: the selected corpus.
        models_: the backends' facts, the embedder specs and the injected objects (``DryRunModels``).
        reply: the stand-ins' reply length (``low`` or ``high``).
    """
    with tempfile.TemporaryDirectory(prefix="lyra-dry-run-") as tmp:  # the cache read, never written
        folder = _copy_of_cache(models_.answered_from, Path(tmp))
        # as the run: with a cache, a prompt asked twice (two cells alike, a shared question) is paid once
        copy = models_._replace(answered_from=folder or (Path(tmp) if models_.cache != "off" else None))
        return _dry_run(setup, cells, corpus, copy, reply)


def _copy_of_cache(folder: Path | None, tmp: Path) -> Path | None:
    """A copy of ``folder``'s response cache in ``tmp`` (None: no cache to answer from).

    Its write-ahead log comes along: an interrupted run's last answers may not be checkpointed yet.
    """
    if folder is None or not (folder / "responses.sqlite").is_file():
        return None
    for name in ("responses.sqlite", "responses.sqlite-wal"):
        if (folder / name).is_file():
            shutil.copyfile(folder / name, tmp / name)
    return tmp


def _dry_run(setup: CellSetup, cells: Sequence[Cell], corpus: Corpus, models_: DryRunModels, reply: Reply) -> DryRun:
    with contextlib.ExitStack() as stack:
        path = embedding_cache_path()
        store = stack.enter_context(EmbeddingCache(path)) if path.is_file() else None  # read, never written
        backends, embedders, injected, cache, _ = models_
        recorders = {spec_label(e): RecordingEmbedder(spec_label(e), like=_run_embedder(e, injected), store=store)
                     for e in embedders if e not in (None, "none")}
        started = time.perf_counter()
        work = []
        for number, cell in enumerate(cells):
            tallies = {label: CallTally() for label in backends}
            models: dict[str, Backend] = {}
            for label, facts in backends.items():
                models[label] = _in_process(facts, injected) if facts.in_process else StandIn(facts, reply, tallies[label], f"c{number}")
            cell_start = time.perf_counter()
            # with a cache, only the calls it does not answer reach the models (and their tallies), as in the run
            with _DryResources("run" if cache else "off", cache or Path("."),
                               Injected(backends=models, embedders=recorders)) as res:
                run_cell(setup, cell.kind.dry(cell, reply), corpus, res, _NullLog())  # what the kind lets a dry run run
            for label, model in models.items():
                if not isinstance(model, StandIn):
                    tallies[label] = _usage_of(model)
            conv = corpus.conversation(cell.conversation_id)
            work.append(CellWork(cell, sum(1 for _ in conv.turns()), len(list(corpus.probes_for(conv.id))),
                                 {label: (t.calls, t.prompt_tokens, t.completion_tokens) for label, t in tallies.items()
                                  if t.calls}, time.perf_counter() - cell_start))
        texts = {label: {kind: tuple(seen) for kind, seen in r.texts.items()} for label, r in recorders.items()}
        return DryRun(tuple(work), texts, time.perf_counter() - started)


def _run_embedder(spec: EmbedderSpec, injected: Injected) -> Embedder | None:
    """The embedder the run builds for ``spec`` (None: it cannot be built here; the plan says why elsewhere)."""
    from lyra_lab._registry import ConfigError

    try:
        return run_embedder(spec, injected.embedders)
    except (ConfigError, ImportError, OSError):
        return None


class _DryResources(Resources):
    """The run's resources with its models as they are given.

    A stand-in or counted backend already carries the identity the run keys its answers by (``BackendFacts``),
    so it is not keyed by its label again; a recorder reads the shared embedding cache and never writes it.
    """

    def _build_backend(self, spec: BackendSpec) -> Backend:
        return self._cached(self._given_backends[spec_label(spec)])

    def _build_embedder(self, spec: EmbedderSpec) -> Embedder:
        return self._given_embedders[spec_label(spec)]


def _in_process(facts: BackendFacts, injected: Injected) -> Backend:
    """A fresh in-process backend of ``facts.spec`` (an injected one as it is), its calls counted."""
    from lyra_lab.backends import make_backend

    return CountedBackend(injected.backends.get(facts.label) or make_backend(facts.spec), facts.identity)


class CountedBackend:
    """An in-process backend asked for real, its calls tallied from their reported usage.

    ``identity``: the one the run keys its answers by (``BackendFacts.identity``; None: the backend's own).
    """

    def __init__(self, inner: Backend, identity: Mapping[str, object] | None = None):
        self.inner = inner
        caps = inner.capabilities
        self.name, self.model = inner.name, inner.model
        self.capabilities = caps if identity is None else dataclasses.replace(caps, identity=dict(identity))
        self.tally = CallTally()

    def complete(self, messages: Sequence[Message], *, deadline: float | None = None, **params: object) -> Completion:
        completion = self.inner.complete(messages, deadline=deadline, **params)
        self.tally.add(completion.usage.prompt_tokens, completion.usage.completion_tokens)
        return completion


def _usage_of(model: Backend) -> CallTally:
    return model.tally if isinstance(model, CountedBackend) else CallTally()

