"""An experiment file (TOML): the corpus, the grid of strategies, backends, seeds, ks, QA and judges.

Example (every key optional except ``corpus.path`` and ``grid.chunkers`` or ``grid.systems``)::

    name = "my-experiment"

    [corpus]
    path = "datasets/synthetic_small.jsonl"   # relative to this file; "dataset:locomo" for an installed dataset
    format = "auto"
    # probes = "my_probes.jsonl"
    conversations = 1          # the first N conversations, or a list of ids
    max_sessions = 6           # the first N sessions of each conversation
    max_probes = 20            # per conversation, round-robin over categories

    [grid]                     # the memory grid is the product of these lists
    chunkers = [{ name = "token_budget", max_tokens = 600 }, { name = "turn_window", max_turns = 8 }]
    summarizers = ["single_pass", "map_reduce"]      # "none": chunks go into memory as they are
    rollups = ["none"]
    triggers = ["session_end"]
    budgets = [2000]
    context_tokens = [600]     # the context block each pipeline renders for the answering model
    keep_raw = [true]
    recallers = ["dense", "bm25", "hybrid"]          # all evaluated on the same memory
    # systems = [{ name = "mem0", infer = false }, "mcp"]   # memory systems lyra-lab does not build, each a
    #                                                      # pipeline of its own (docs/memory-systems.md)

    [run]
    backends = ["local"]
    embedders = ["e5"]                   # the default: multilingual-e5-small on ONNX Runtime int8
    seeds = [0]
    ks = [1, 5, 10]
    score_at_tokens = [256, 512, 1024]   # also score every pipeline at these rendered-context tokens
    # confirm_above_usd = 1.0            # `lyra-lab run` asks first when the plan costs more at list prices
    # confirm_above_minutes = 30         # ... or takes longer on this machine (--yes answers)

    [qa]
    enabled = false
    # prompts = ["short_v1", "locomo", "mem0"]    # every probe answered under each, over the same context
    # repeats = 3                                 # each answer asked 3 times (needs temperature > 0)
    # temperature = 0.7
    # judges = [{ prompt = "correct_wrong_v1", backend = "openai/gpt-4o-mini" },   # every answer graded
    #           { prompt = "longmemeval_v1", backend = "local" }]                  # by each judge

Unknown keys anywhere raise ``ConfigError`` naming the key and its table, and
every strategy spec is built once here, so a typo fails before any work starts.
Combinations that cannot work fail here too, and pipelines that provably build
the same memory are listed in ``aliases`` (see ``_combos``).
"""

from __future__ import annotations

import itertools
import json
import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, TypeVar

from lyra_lab._records import fields_of
from lyra_lab._registry import ConfigError
from lyra_lab.backends import DEFAULT_EMBEDDER, BackendSpec, redact
from lyra_lab.measures import JudgeConfig
from lyra_lab.experiments.grid._combos import check_needs, check_recallers, find_aliases
from lyra_lab.experiments.grid._judges import check_judges, parse_judges
from lyra_lab.experiments.grid._qa_options import check_qa_options, parse_qa_options
from lyra_lab.experiments.grid._labels import pipeline_labels
from lyra_lab.experiments.grid._system_pipeline import SystemPipeline, system_pipelines
from lyra_lab.replay import Pipeline, Registries, strategy_spec

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T")

TABLES: dict[str, tuple[str, ...]] = {
    "": ("name", "description", "corpus", "grid", "run", "qa"),
    "corpus": ("path", "format", "probes", "conversations", "max_sessions", "max_probes", "categories",
               "include_attachments"),
    "grid": ("chunkers", "summarizers", "rollups", "triggers", "budgets", "context_tokens", "keep_raw",
             "recallers", "systems"),
    "run": ("backends", "embedders", "seeds", "ks", "score_at_tokens", "tokenizer", "workers", "max_cells", "cache",
            "executor", "score_adversarial_retrieval", "confirm_above_usd", "confirm_above_minutes"),
    "qa": ("enabled", "backend", "prompt", "prompts", "max_probes", "max_tokens", "scorer", "judges", "repeats",
           "temperature"),
}
# Keys that were renamed: (table, old key) -> the one-line error naming the new key and what it means.
RENAMED: dict[tuple[str, str], str] = {
    ("grid", "context_budgets"): "[grid] context_budgets is now context_tokens: the size of the context block each "
                                 "pipeline renders for the answering model (tokens)",
    ("run", "context_budgets"): "[run] context_budgets is now score_at_tokens: the context sizes B at which every "
                                "pipeline is also scored (answer_in_context@<B>tok, ...)",
}
CACHE_MODES = ("run", "user", "off")
EXECUTORS = ("serial", "threads", "processes", "ray")  # how cells run; none given: serial, or threads when max_cells > 1
#: Field metadata of a key added after cell ids existed: hashed only when set away from its default.
WHEN_SET: Mapping[str, bool] = {"hashed_when_set": True}


@dataclass(frozen=True)
class CorpusSpec:
    """Which conversations and probes to replay, and how much of them."""

    path: Path
    format: str = "auto"
    probes: Path | None = None
    conversations: int | tuple[str, ...] | None = None
    max_sessions: int | None = None
    max_probes: int | None = None
    categories: tuple[str, ...] | None = None
    include_attachments: bool = True


@dataclass(frozen=True)
class QASpec:
    """Answering probes from the recalled context (scored by EM/F1). ``backend`` None: the cell's backend."""

    enabled: bool = False
    backend: BackendSpec | None = None
    prompt: str = "short_v1"
    max_probes: int | None = None
    max_tokens: int = 32
    scorer: str = "squad"
    judges: tuple[JudgeConfig, ...] = ()  # every answer is graded by each
    # newer than cell ids: hashed (and in spec.json) only when set away from the default (``vars_of``)
    prompts: tuple[str, ...] = field(default=(), metadata=WHEN_SET)  # each probe answered under each, one context
    repeats: int = field(default=1, metadata=WHEN_SET)  # each answer asked this many times (_qa_options)
    temperature: float = field(default=0.0, metadata=WHEN_SET)  # of the answering calls

    def __post_init__(self) -> None:
        from lyra_lab.measures import check_scorer

        check_scorer(self.scorer)  # a ConfigError listing the known scorers
        check_qa_options(self)

    @property
    def answer_prompts(self) -> tuple[str, ...]:
        """The answer prompts every probe is asked under: ``prompts``, or ``prompt`` alone."""
        return self.prompts or (self.prompt,)


@dataclass(frozen=True)
class ExperimentSpec:
    """A resolved experiment: every memory pipeline of the grid, the recallers, and how to run them."""

    name: str
    corpus: CorpusSpec
    pipelines: tuple[Pipeline, ...]
    recallers: tuple[tuple[str, Any], ...]  # (label, recaller)
    backends: tuple[Any, ...] = ("local",)
    embedders: tuple[Any, ...] = (DEFAULT_EMBEDDER,)
    seeds: tuple[int, ...] = (0,)
    ks: tuple[int, ...] = (1, 5, 10)
    context_budgets: tuple[int, ...] = (256, 512, 1024)  # [run] score_at_tokens: equal-budget scoring (measures)
    workers: int = 1
    max_cells: int = 1  # cells in flight at once (threads, worker processes or Ray tasks, by executor)
    cache: str = "run"
    executor: str | None = None  # one of EXECUTORS; None: by max_cells (not in spec.json: rows do not depend on it)
    score_adversarial_retrieval: bool = False  # also score retrieval of adversarial/abstention probes
    confirm_above_usd: float | None = None  # `lyra-lab run` asks before a run whose plan costs more (not in spec.json)
    confirm_above_minutes: float | None = None  # ... or takes longer on this machine (not in spec.json)
    qa: QASpec = QASpec()
    description: str = ""
    source: Path | None = field(default=None, compare=False)
    aliases: tuple[dict[str, Any], ...] = field(default=(), compare=False)  # see _combos.find_aliases
    systems: tuple[SystemPipeline, ...] = ()  # [grid] systems: memory systems as pipelines (_system_pipeline)
    # the plain data ``from_dict`` built it from (None: not plain JSON), what a run built in Python exports
    data: Mapping[str, object] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str], registries: Registries | None = None) -> "ExperimentSpec":
        """Read and validate an experiment file; relative paths in it are relative to the file."""
        path = Path(path)
        try:
            with path.open("rb") as fh:
                data = tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML ({exc})") from None
        spec = cls.from_dict(data, base_dir=path.parent, registries=registries, default_name=path.stem)
        return replace(spec, source=path.resolve())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, base_dir: str | Path = ".", registries: Registries | None = None,
                  default_name: str = "experiment") -> "ExperimentSpec":
        """Build from the same structure as the TOML file (for notebooks and tests)."""
        regs = registries or Registries.default()
        if "judge" in data:
            raise ConfigError("the [judge] table is gone: list the judges in [qa] judges = "
                              "[{ prompt = \"correct_wrong_v1\", backend = \"...\" }] (each grades every answer)")
        _check_keys(data, "")
        for table in ("corpus", "grid", "run", "qa"):
            value = data.get(table, {})
            if not isinstance(value, Mapping):
                raise ConfigError(f"[{table}] must be a table, got {type(value).__name__}")
            _check_keys(value, table)
        corpus = corpus_spec(data.get("corpus", {}), Path(base_dir))
        grid = data.get("grid", {})
        run = data.get("run", {})
        pipelines = _pipelines(grid, run, regs) if "chunkers" in grid or "systems" not in grid else ()
        systems = system_pipelines(_list(grid, "systems", [], "grid"), _list(grid, "context_tokens", [1000], "grid"),
                                   run.get("tokenizer", "o200k_base")) if "systems" in grid else ()
        recallers = _recallers(_list(grid, "recallers", ["dense"], "grid"), regs)
        check_recallers(pipelines, recallers)
        written = _list(run, "ks", [1, 5, 10], "run")
        if any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in written):
            raise ConfigError(f"[run] ks must be positive integers, e.g. ks = [1, 5, 10]; got ks = {_as_toml(run['ks'])}")
        ks = tuple(sorted(set(written)))
        budgets = run.get("score_at_tokens", [256, 512, 1024])  # [] turns equal-budget scoring off
        listed = budgets if isinstance(budgets, list) else [budgets]
        if any(isinstance(b, bool) or not isinstance(b, int) or b < 1 for b in listed):
            raise ConfigError("[run] score_at_tokens must be positive integers (tokens), e.g. [256, 512, 1024]; "
                              f"got score_at_tokens = {_as_toml(budgets)}")
        budgets = listed
        cache = run.get("cache", "run")
        if cache not in CACHE_MODES:
            raise ConfigError(f"[run] cache must be one of {CACHE_MODES}, got {cache!r}")
        workers = run.get("workers", 1)
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ConfigError(f"[run] workers must be a positive integer, got {workers!r}")
        max_cells = run.get("max_cells", 1)
        if isinstance(max_cells, bool) or not isinstance(max_cells, int) or max_cells < 1:
            raise ConfigError(f"[run] max_cells must be a positive integer, got {max_cells!r}")
        executor = run.get("executor")
        if executor is not None and executor not in EXECUTORS:
            raise ConfigError(f"[run] executor must be one of {EXECUTORS}, got {executor!r}")
        adversarial = run.get("score_adversarial_retrieval", False)
        if not isinstance(adversarial, bool):
            raise ConfigError(f"[run] score_adversarial_retrieval must be true or false, got {adversarial!r}")
        confirm = {key: run.get(key) for key in ("confirm_above_usd", "confirm_above_minutes")}
        for key, value in confirm.items():
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
                raise ConfigError(f"[run] {key} must be a number >= 0, got {value!r}")
        seeds = tuple(_list(run, "seeds", [0], "run"))
        if any(isinstance(s, bool) or not isinstance(s, int) for s in seeds):
            raise ConfigError(f"[run] seeds must be integers, got {list(seeds)!r}")
        qa = _sub(QASpec, parse_qa_options(parse_judges(data.get("qa", {}))), "qa")
        check_judges(qa.judges, qa.enabled)
        embedders = tuple(_list(run, "embedders", [DEFAULT_EMBEDDER], "run"))
        check_needs(recallers, systems, embedders)
        name = str(data.get("name") or default_name)
        if not name or "/" in name or name.startswith("."):
            raise ConfigError(f"name {name!r} must be a plain folder name")
        return cls(name=name, corpus=corpus, pipelines=pipelines, recallers=recallers,
                   backends=tuple(_list(run, "backends", ["local"], "run")),
                   embedders=embedders, seeds=seeds, ks=ks,
                   context_budgets=tuple(sorted(set(budgets))), workers=workers, max_cells=max_cells, cache=cache, executor=executor,
                   score_adversarial_retrieval=adversarial, qa=qa, **confirm, description=str(data.get("description", "")),
                   aliases=find_aliases(pipelines, pipeline_labels(pipelines)), systems=systems,
                   data=_plain(data))

    def to_dict(self) -> dict[str, Any]:
        """The resolved spec (all strategy parameters, absolute paths): what ``spec.json`` holds."""
        return {
            "name": self.name, "description": self.description,
            "source": str(self.source) if self.source else None,
            "corpus": fields_of(self.corpus),
            "pipelines": [p.to_dict() for p in self.pipelines],
            "recallers": [{"label": label, **strategy_spec(r)} for label, r in self.recallers],
            # backend specs may carry URL credentials or header values: recorded redacted, never raw
            "backends": redact(list(self.backends)), "embedders": redact(list(self.embedders)),
            "seeds": list(self.seeds), "ks": list(self.ks), "context_budgets": list(self.context_budgets),
            "workers": self.workers, "max_cells": self.max_cells, "cache": self.cache,
            # [qa] prompts/repeats/temperature only when set (vars_of), so older runs' spec.json still matches
            "qa": redact({k: v for k, v in fields_of(self.qa).items() if k in vars_of(self.qa)}),
            "aliases": [dict(a) for a in self.aliases],
            # only when set, so spec.json of runs from before the key existed still matches on resume
            **({"score_adversarial_retrieval": True} if self.score_adversarial_retrieval else {}),
            **({"systems": [s.to_dict() for s in self.systems]} if self.systems else {}),
        }


def _plain(data: Mapping[str, object]) -> dict[str, object] | None:
    """A JSON copy of ``data`` (None when it holds something JSON cannot: a built strategy object)."""
    try:
        return dict(json.loads(json.dumps(data)))
    except (TypeError, ValueError):
        return None


def vars_of(obj: DataclassInstance) -> dict[str, Any]:
    """``obj``'s fields as raw values (not ``fields_of``): cell ids hash ``json.dumps(vars_of(qa), default=str)``.

    A field marked ``WHEN_SET`` at its default is left out, so a spec without it hashes as before it existed.
    """
    return {k: getattr(obj, k) for k, f in obj.__dataclass_fields__.items()
            if not (f.metadata.get("hashed_when_set") and getattr(obj, k) == f.default)}


def _check_keys(table: Mapping[str, Any], name: str) -> None:
    allowed = TABLES[name]
    for key in table:
        if (name, key) in RENAMED:
            raise ConfigError(RENAMED[(name, key)])
        if key not in allowed:
            where = f"table [{name}]" if name else "the top level"
            raise ConfigError(f"unknown key {key!r} in {where}; allowed: {', '.join(allowed)}")


def _as_toml(value: object) -> str:
    """``value`` as the experiment file wrote it (``"10"`` for a string, ``[1, "5"]`` for a list)."""
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _list(table: Mapping[str, Any], key: str, default: list[Any], name: str) -> list[Any]:
    value = table.get(key, default)
    if not isinstance(value, list):
        value = [value]
    if not value:
        raise ConfigError(f"[{name}] {key} must not be empty")
    return value


def _sub(cls: type[T], table: Mapping[str, Any], name: str) -> T:
    try:
        return cls(**table)
    except TypeError as exc:
        raise ConfigError(f"[{name}]: {exc}") from None


def corpus_spec(table: Mapping[str, Any], base: Path) -> CorpusSpec:
    """The ``[corpus]`` table as a ``CorpusSpec``, its relative paths read from ``base``."""
    if "path" not in table:
        raise ConfigError("[corpus] needs a 'path'")
    probes = table.get("probes")
    conversations = table.get("conversations")
    if isinstance(conversations, list):
        conversations = tuple(str(c) for c in conversations)
    for key in ("max_sessions", "max_probes"):
        v = table.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise ConfigError(f"[corpus] {key} must be a positive integer, got {v!r}")
    if conversations is not None and not isinstance(conversations, tuple) and (
            isinstance(conversations, bool) or not isinstance(conversations, int) or conversations < 1):
        raise ConfigError(f"[corpus] conversations must be a positive integer or a list of ids, got {conversations!r}")
    categories = table.get("categories")
    attachments = table.get("include_attachments", True)
    if not isinstance(attachments, bool):
        raise ConfigError(f"[corpus] include_attachments must be true or false, got {attachments!r}")
    where = str(table["path"])
    if where.startswith("dataset:"):  # a public dataset installed by `lyra-lab datasets get NAME`
        from lyra_lab.datasets import DatasetError, path as dataset_path

        try:
            corpus_path = dataset_path(where.removeprefix("dataset:"))
        except DatasetError as exc:
            raise ConfigError(f"[corpus] path {where!r}: {exc}") from None
    else:
        corpus_path = (base / where).resolve()
    return CorpusSpec(
        path=corpus_path, format=str(table.get("format", "auto")),
        probes=(base / probes).resolve() if probes else None, conversations=conversations,
        max_sessions=table.get("max_sessions"), max_probes=table.get("max_probes"),
        categories=tuple(str(c) for c in categories) if categories else None, include_attachments=attachments)


def _pipelines(grid: Mapping[str, Any], run: Mapping[str, Any], regs: Registries) -> tuple[Pipeline, ...]:
    if "chunkers" not in grid:
        raise ConfigError("[grid] needs 'chunkers' (a list of chunker specs) or 'systems' (memory systems)")
    axes = {
        "chunker": _list(grid, "chunkers", [], "grid"),
        "summarizer": _list(grid, "summarizers", ["none"], "grid"),
        "rollup": _list(grid, "rollups", ["none"], "grid"),
        "trigger": _list(grid, "triggers", ["session_end"], "grid"),
        "budget": _list(grid, "budgets", [2000], "grid"),
        "context_budget": _list(grid, "context_tokens", [1000], "grid"),
        "keep_raw": _list(grid, "keep_raw", [True], "grid"),
    }
    tokenizer = run.get("tokenizer", "o200k_base")
    pipelines = []
    for combo in itertools.product(*axes.values()):
        spec = dict(zip(axes, combo), tokenizer=tokenizer)
        try:
            pipelines.append(Pipeline.from_dict(spec, regs))
        except ConfigError as exc:
            raise ConfigError(f"in table [grid]: {exc}") from None
    unique = tuple(dict.fromkeys(pipelines))
    if len(unique) != len(pipelines):
        raise ConfigError("[grid] lists the same pipeline twice")
    return unique


def _recallers(specs: list[Any], regs: Registries) -> tuple[tuple[str, Any], ...]:
    from lyra_lab.experiments.grid._labels import distinct_labels

    try:
        built = [regs.recallers.build(s) for s in specs]
    except ConfigError as exc:
        raise ConfigError(f"in table [grid] recallers: {exc}") from None
    labels = distinct_labels(built)
    if len(set(labels)) != len(labels):
        raise ConfigError("[grid] lists the same recaller twice")
    return tuple(zip(labels, built))
